import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { appendEntry, entryBytes, MAX_ENTRY_BYTES, readForPrompt, rememberToolSpec } from '../../../../src/core/memory/memory';
import { MemoryError } from '../../../../src/core/memory/errors';
import { summaryText } from '../../../../src/core/memory/condensePrompt';
import { tempFolder } from './helpers';

const now = new Date('2026-11-30T10:00:00.123Z');
const kind = (expected: string) => (err: unknown) => err instanceof MemoryError && err.kind === expected;

describe('memory file: the remember tool', () => {
  it('appends a dated entry, creating the folder and the file', async () => {
    const file = path.join(tempFolder(), 'memory', 'ws', 'memory.md');
    const bytes = await appendEntry(file, 'The tests run with `npm test`.\n\n', now);
    const expected = '\n## 2026-11-30T10:00:00Z\nThe tests run with `npm test`.\n';
    assert.equal(fs.readFileSync(file, 'utf8'), expected);
    assert.equal(bytes, Buffer.byteLength(expected));
  });

  it('appends after whatever the file holds, byte for byte, even without a trailing newline or with CRLF', async () => {
    const file = path.join(tempFolder(), 'memory.md');
    const before = Buffer.from('hand edit\r\nno newline at end ✓', 'utf8');
    fs.writeFileSync(file, before);
    await appendEntry(file, '日本語のメモ 🎉', now);
    const after = fs.readFileSync(file);
    assert.ok(after.subarray(0, before.length).equals(before));
    assert.equal(after.subarray(before.length).toString('utf8'), '\n## 2026-11-30T10:00:00Z\n日本語のメモ 🎉\n');
  });

  it('many concurrent appends all land, each whole, none twice', async () => {
    const file = path.join(tempFolder(), 'memory.md');
    await Promise.all(Array.from({ length: 200 }, (_, i) => appendEntry(file, `note ${i} 🧠`, now)));
    const text = fs.readFileSync(file, 'utf8');
    for (let i = 0; i < 200; i++) assert.equal(text.split(`\nnote ${i} 🧠\n`).length, 2, `note ${i}`);
    const expectedBytes = Array.from({ length: 200 }, (_, i) => entryBytes(`note ${i} 🧠`, now).length).reduce((a, b) => a + b, 0);
    assert.equal(Buffer.byteLength(text), expectedBytes);
  });

  it('refuses an empty note and a note over the size limit, with a kind', () => {
    assert.throws(() => entryBytes(' \n\t ', now), kind('empty-entry'));
    assert.throws(() => entryBytes('x'.repeat(MAX_ENTRY_BYTES), now), kind('entry-too-long'));
  });

  it('the tool spec is an OpenAI function tool with one required string "text"', () => {
    assert.equal(rememberToolSpec.type, 'function');
    assert.equal(rememberToolSpec.function.name, 'remember');
    const parameters = rememberToolSpec.function.parameters as { properties: { text: { type: string } }; required: string[] };
    assert.equal(parameters.properties.text.type, 'string');
    assert.deepEqual(parameters.required, ['text']);
    assert.doesNotThrow(() => JSON.stringify(rememberToolSpec));
  });
});

describe('memory file: bounded content for the system prompt', () => {
  it('a missing file is empty memory', async () => {
    assert.equal(await readForPrompt(path.join(tempFolder(), 'nope.md'), 100), '');
  });

  it('a file within the bound comes back whole', async () => {
    const file = path.join(tempFolder(), 'memory.md');
    fs.writeFileSync(file, 'a\r\nb 🎉\n');
    assert.equal(await readForPrompt(file, 100), 'a\r\nb 🎉\n');
  });

  it('a larger file keeps its newest part, cut at a line start, after a marker, within the bound', async () => {
    const file = path.join(tempFolder(), 'memory.md');
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i} 漢字`);
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const text = await readForPrompt(file, 1000);
    assert.ok(Buffer.byteLength(text) <= 1000, `${Buffer.byteLength(text)} bytes`);
    const [marker, ...rest] = text.split('\n');
    assert.match(marker ?? '', /^\[older memory omitted: \d+ bytes\]$/);
    assert.ok(text.endsWith('line 499 漢字\n'));
    assert.ok(lines.includes(rest[0] ?? ''), `first kept line is whole: ${rest[0]}`);
    const omitted = Number(/(\d+)/.exec(marker ?? '')?.[1]);
    assert.equal(omitted + Buffer.byteLength(rest.join('\n')), fs.statSync(file).size);
  });

  it('one long line without newlines is cut at a character boundary', async () => {
    const file = path.join(tempFolder(), 'memory.md');
    fs.writeFileSync(file, '漢'.repeat(1000));
    const text = await readForPrompt(file, 200);
    assert.ok(Buffer.byteLength(text) <= 200);
    assert.ok(!text.includes('\uFFFD'), 'no character split in half');
    assert.match(text, /^\[older memory omitted: \d+ bytes\]\n漢+$/);
  });

  it('invalid UTF-8 becomes replacement characters, never an error, and stays within the bound', async () => {
    const file = path.join(tempFolder(), 'memory.md');
    fs.writeFileSync(file, Buffer.from([0x61, 0x80, 0x0a, 0xc0, 0xaf, 0x0a, 0xe2, 0x82]));
    assert.equal(await readForPrompt(file, 100), 'a\uFFFD\n\uFFFD\uFFFD\n\uFFFD');
    fs.writeFileSync(file, Buffer.alloc(400, 0xff));
    const text = await readForPrompt(file, 120);
    assert.ok(Buffer.byteLength(text) <= 120, `${Buffer.byteLength(text)} bytes`);
    assert.match(text, /^\[older memory omitted: \d+ bytes\]\n\uFFFD+$/);
  });
});

describe('condense prompt', () => {
  it('the summary loses an outer code fence and ends with one newline', () => {
    assert.equal(summaryText('```markdown\n# Memory\n- a\n```'), '# Memory\n- a\n');
    assert.equal(summaryText('  - a\n\n'), '- a\n');
    assert.equal(summaryText(' \n '), '');
  });
});
