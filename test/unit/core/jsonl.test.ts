import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppendQueue, appendJsonLine, JsonlTail, readJsonLines } from '../../../src/core/jsonl';
import { tempFolderPerTest } from '../../helpers/tempFolder';

const WRITERS = ['a', 'b', 'c'];

/** Runs the script `writer` in three processes at once, one per writer name. */
async function runWriters(writer: string): Promise<void> {
  const run = (who: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [writer, who], { stdio: 'inherit', cwd: path.resolve(__dirname, '../../..') });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${who} exited ${code}`))));
    });
  await Promise.all(WRITERS.map(run));
}

/** Asserts that no line of the file is torn and that each writer's 400 lines are all there, in order. */
function everyLineOfEachWriter(file: string): void {
  const { records, skipped } = readJsonLines<{ who: string; i: number }>(file);
  assert.equal(skipped.length, 0);
  for (const who of WRITERS) assert.deepEqual(records.filter((r) => r.who === who).map((r) => r.i), [...Array(400).keys()], `every line of writer ${who}, in order`);
}

describe('durable JSONL', () => {
  const dir = tempFolderPerTest('candor-jsonl-');

  it('appends one line per record and reads them back in order', () => {
    const file = path.join(dir(), 'a.jsonl');
    appendJsonLine(file, { v: 1, n: 1, text: 'line\nwith newline 漢字' });
    appendJsonLine(file, { v: 1, n: 2 });
    assert.equal(fs.readFileSync(file, 'utf8').split('\n').length, 3);
    const { records, skipped } = readJsonLines<{ n: number; text?: string }>(file);
    assert.deepEqual(records.map((r) => r.n), [1, 2]);
    assert.equal(records[0]?.text, 'line\nwith newline 漢字');
    assert.equal(skipped.length, 0);
  });

  it('a missing file reads as empty, not as an error', () => {
    assert.deepEqual(readJsonLines(path.join(dir(), 'none.jsonl')), { records: [], skipped: [] });
  });

  it('a garbage line and a truncated last line are skipped and counted, and the file keeps every byte', () => {
    const file = path.join(dir(), 'b.jsonl');
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
    const file = path.join(dir(), 'c.jsonl');
    fs.writeFileSync(file, '{"v":1,"n":1}\n{"v":1,"n":2,"cu');
    appendJsonLine(file, { v: 1, n: 3 });
    const { records, skipped } = readJsonLines<{ n: number }>(file);
    assert.deepEqual(records.map((r) => r.n), [1, 3]);
    assert.equal(skipped.length, 1);
  });

  it('two processes appending at once lose nothing and tear no line', async function () {
    this.timeout(60000);
    const file = path.join(dir(), 'shared.jsonl');
    const writer = path.join(dir(), 'writer.js');
    const jsonl = require.resolve('../../../src/core/jsonl');
    fs.writeFileSync(writer, `
      require(${JSON.stringify(require.resolve('tsx/cjs'))});
      const { appendJsonLine } = require(${JSON.stringify(jsonl)});
      const who = process.argv[2];
      for (let i = 0; i < 400; i++) appendJsonLine(${JSON.stringify(file)}, { v: 1, who, i, pad: 'x'.repeat(i % 97) + '漢字' }, { sync: false });
    `);
    await runWriters(writer);
    everyLineOfEachWriter(file);
  });

  it('two processes writing through append queues lose nothing and tear no line', async function () {
    this.timeout(60000);
    const file = path.join(dir(), 'queued.jsonl');
    const writer = path.join(dir(), 'queued-writer.js');
    const jsonl = require.resolve('../../../src/core/jsonl');
    fs.writeFileSync(writer, `
      require(${JSON.stringify(require.resolve('tsx/cjs'))});
      const { AppendQueue } = require(${JSON.stringify(jsonl)});
      const who = process.argv[2];
      const queue = new AppendQueue();
      (async () => {
        for (let i = 0; i < 400; i++) {
          queue.append(${JSON.stringify(file)}, { v: 1, who, i, pad: 'x'.repeat(i % 97) + '漢字' });
          queue.append(${JSON.stringify(path.join(dir(), 'own-'))} + who + '.jsonl', { v: 1, who, i });
          if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1));
        }
        await queue.flushed();
      })().catch((err) => { console.error(err); process.exit(1); });
    `);
    await runWriters(writer);
    everyLineOfEachWriter(file);
    for (const who of WRITERS) {
      const own = readJsonLines<{ who: string; i: number }>(path.join(dir(), `own-${who}.jsonl`));
      assert.equal(own.skipped.length, 0);
      assert.deepEqual(own.records.map((r) => `${r.who}${r.i}`), [...Array(400).keys()].map((i) => `${who}${i}`), `writer ${who}'s own file holds its lines only`);
    }
  });
});

describe('the append queue', () => {
  const dir = tempFolderPerTest('candor-queue-');

  it('returns before anything is written; once flushed, every line is on disk, in order', async () => {
    const queue = new AppendQueue();
    const file = path.join(dir(), 'sub', 'a.jsonl');
    for (let i = 0; i < 500; i++) queue.append(file, { v: 1, i });
    assert.equal(fs.existsSync(file), false, 'nothing was written on the caller\'s turn');
    await queue.flushed(file);
    assert.deepEqual(readJsonLines<{ i: number }>(file).records.map((r) => r.i), [...Array(500).keys()]);
    // Lines appended while a write is under way follow it, in order.
    for (let i = 500; i < 520; i++) {
      queue.append(file, { v: 1, i });
      await new Promise((r) => setImmediate(r));
    }
    await queue.flushed();
    assert.deepEqual(readJsonLines<{ i: number }>(file).records.map((r) => r.i), [...Array(520).keys()]);
  });

  it('a failed write is reported by the next flush, once; later appends still go through', async () => {
    const queue = new AppendQueue();
    const blocker = path.join(dir(), 'blocked');
    fs.writeFileSync(blocker, 'a file where a folder should be');
    const file = path.join(blocker, 'a.jsonl');
    queue.append(file, { v: 1, n: 1 });
    await assert.rejects(queue.flushed(file), /ENOTDIR|EEXIST/);
    await queue.flushed(file);
    fs.rmSync(blocker);
    queue.append(file, { v: 1, n: 2 });
    await queue.flushed(file);
    assert.deepEqual(readJsonLines<{ n: number }>(file).records.map((r) => r.n), [2]);
  });

  it('a line queued after a truncated one starts on a new line', async () => {
    const queue = new AppendQueue();
    const file = path.join(dir(), 'c.jsonl');
    fs.writeFileSync(file, '{"v":1,"n":1}\n{"v":1,"n":2,"cu');
    queue.append(file, { v: 1, n: 3 });
    await queue.flushed();
    const { records, skipped } = readJsonLines<{ n: number }>(file);
    assert.deepEqual(records.map((r) => r.n), [1, 3]);
    assert.equal(skipped.length, 1);
  });
});

describe('following a JSON-lines file', () => {
  const dir = tempFolderPerTest('candor-tail-');

  it('each read returns the whole lines appended since the last one, and holds back a line still being written', () => {
    const file = path.join(dir(), 'd.jsonl');
    const tail = new JsonlTail<{ n: number }>(file);
    assert.deepEqual(tail.read(), { records: [], skipped: [], restarted: false, pending: false });
    fs.writeFileSync(file, '{"v":1,"n":1}\nnot json\n{"v":1,"n":2');
    const first = tail.read();
    assert.deepEqual(first.records.map((r) => r.n), [1]);
    assert.deepEqual(first.skipped.map((s) => s.lineNumber), [2]);
    assert.equal(first.pending, true);
    fs.appendFileSync(file, ',"z":"漢字"}\n{"v":1,"n":3}\n[]\n');
    const second = tail.read();
    assert.deepEqual(second.records.map((r) => r.n), [2, 3]);
    assert.deepEqual(second.skipped.map((s) => `${s.lineNumber}:${s.reason}`), ['5:not-object'], 'line numbers count from the start of the file');
    assert.equal(second.pending, false);
    assert.deepEqual(tail.read().records, []);
    fs.writeFileSync(file, '{"v":1,"n":9}\n');
    const third = tail.read();
    assert.equal(third.restarted, true, 'a shorter file is read again from its start');
    assert.deepEqual(third.records.map((r) => r.n), [9]);
  });
});
