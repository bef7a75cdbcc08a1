import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appendJsonLine, readJsonLines } from '../../../src/core/jsonl';

describe('durable JSONL', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-jsonl-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('appends one line per record and reads them back in order', () => {
    const file = path.join(dir, 'a.jsonl');
    appendJsonLine(file, { v: 1, n: 1, text: 'line\nwith newline 漢字' });
    appendJsonLine(file, { v: 1, n: 2 });
    assert.equal(fs.readFileSync(file, 'utf8').split('\n').length, 3);
    const { records, skipped } = readJsonLines<{ n: number; text?: string }>(file);
    assert.deepEqual(records.map((r) => r.n), [1, 2]);
    assert.equal(records[0]?.text, 'line\nwith newline 漢字');
    assert.equal(skipped.length, 0);
  });

  it('a missing file reads as empty, not as an error', () => {
    assert.deepEqual(readJsonLines(path.join(dir, 'none.jsonl')), { records: [], skipped: [] });
  });

  it('a garbage line and a truncated last line are skipped and counted, and the file keeps every byte', () => {
    const file = path.join(dir, 'b.jsonl');
    appendJsonLine(file, { v: 1, n: 1 });
    fs.appendFileSync(file, 'garbage that is not json\n[1,2]\n');
    appendJsonLine(file, { v: 1, n: 2 });
    fs.appendFileSync(file, '{"v":1,"n":3,"cut');
    const before = fs.readFileSync(file);
    const { records, skipped } = readJsonLines<{ n: number }>(file);
    assert.deepEqual(records.map((r) => r.n), [1, 2]);
    assert.deepEqual(skipped.map((s) => s.reason), ['not-json', 'not-object', 'truncated']);
    assert.deepEqual(fs.readFileSync(file), before, 'reading never rewrites the file');
  });

  it('an append after a truncated line starts on a new line, so only the damaged line is lost', () => {
    const file = path.join(dir, 'c.jsonl');
    fs.writeFileSync(file, '{"v":1,"n":1}\n{"v":1,"n":2,"cu');
    appendJsonLine(file, { v: 1, n: 3 });
    const { records, skipped } = readJsonLines<{ n: number }>(file);
    assert.deepEqual(records.map((r) => r.n), [1, 3]);
    assert.equal(skipped.length, 1);
  });

  it('two processes appending at once lose nothing and tear no line', async function () {
    this.timeout(60000);
    const file = path.join(dir, 'shared.jsonl');
    const writer = path.join(dir, 'writer.js');
    const jsonl = require.resolve('../../../src/core/jsonl');
    fs.writeFileSync(writer, `
      require(${JSON.stringify(require.resolve('tsx/cjs'))});
      const { appendJsonLine } = require(${JSON.stringify(jsonl)});
      const who = process.argv[2];
      for (let i = 0; i < 400; i++) appendJsonLine(${JSON.stringify(file)}, { v: 1, who, i, pad: 'x'.repeat(i % 97) + '漢字' }, { sync: false });
    `);
    const run = (who: string) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [writer, who], { stdio: 'inherit', cwd: path.resolve(__dirname, '../../..') });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${who} exited ${code}`))));
      });
    await Promise.all([run('a'), run('b'), run('c')]);
    const { records, skipped } = readJsonLines<{ who: string; i: number }>(file);
    assert.equal(skipped.length, 0);
    for (const who of ['a', 'b', 'c']) {
      assert.deepEqual(records.filter((r) => r.who === who).map((r) => r.i), [...Array(400).keys()], `every line of writer ${who}, in order`);
    }
  });
});
