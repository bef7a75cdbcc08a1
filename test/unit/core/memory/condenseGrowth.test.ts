import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { condenseMemory, type CondenseOutcome, type SwapHooks } from '../../../../src/core/memory/condense';
import { MAX_CARRY_ROUNDS } from '../../../../src/core/memory/swap';
import { LATE_WRITE_GRACE_MS } from '../../../../src/core/memory/swap';
import { seedNotes, startModelServer, tempFolder, tempLeftovers, waitFor, type ModelServer } from './helpers';

const SUMMARY = '# Memory\n- condensed\n';

/**
 * Appends that keep arriving during the swap phase. The observer hook only
 * marks the moment before each re-check; the bytes come from plain appends
 * (synchronous in the hook, or from another process).
 */
describe('memory condense: re-check rounds while the file keeps growing', () => {
  let model: ModelServer;
  let dir: string;
  let file: string;

  beforeEach(async () => {
    model = await startModelServer();
    model.use({ rules: [{ respond: { text: SUMMARY } }] });
    dir = tempFolder();
    file = path.join(dir, 'memory.md');
  });
  afterEach(async () => model.close());

  const condense = (hooks: SwapHooks): Promise<CondenseOutcome> =>
    condenseMemory({ file, model: model.model, unsavedFiles: () => [], hooks });

  const line = (round: number): Buffer => Buffer.from(`round ${round}: 追記 🚀\r\n`, 'utf8');

  it(`appends before each of ${MAX_CARRY_ROUNDS} re-checks are all carried, in order, byte for byte`, async () => {
    fs.writeFileSync(file, seedNotes());
    const appended: Buffer[] = [];
    const outcome = await condense({
      beforeSwapCheck: (round) => {
        if (round >= MAX_CARRY_ROUNDS) return;
        appended.push(line(round));
        fs.appendFileSync(file, line(round));
      },
    });
    const carried = Buffer.concat(appended);
    assert.deepEqual(outcome, {
      ok: true,
      beforeBytes: seedNotes().length + carried.length,
      afterBytes: Buffer.byteLength(SUMMARY) + carried.length,
      carriedBytes: carried.length,
      rounds: MAX_CARRY_ROUNDS,
    });
    assert.ok(fs.readFileSync(file).equals(Buffer.concat([Buffer.from(SUMMARY), carried])));
    assert.ok(fs.readFileSync(`${file}.bak`).equals(Buffer.concat([seedNotes(), carried])));
  });

  it('appends that keep coming past the last round → still-growing, every byte still in the file, nothing swapped', async () => {
    const seed = seedNotes();
    fs.writeFileSync(file, seed);
    const appended: Buffer[] = [];
    const outcome = await condense({
      beforeSwapCheck: (round) => {
        appended.push(line(round));
        fs.appendFileSync(file, line(round));
      },
    });
    assert.equal(outcome.ok ? 'ok' : outcome.reason, 'still-growing');
    assert.equal(appended.length, MAX_CARRY_ROUNDS + 1);
    assert.ok(fs.readFileSync(file).equals(Buffer.concat([seed, ...appended])));
    assert.deepEqual(tempLeftovers(dir), []);
    assert.equal(fs.existsSync(`${file}.bak`), false);
  });

  it('a real writer in another process that never stops → still-growing; its lines are all there, once, in order', async function () {
    this.timeout(15_000);
    const seed = seedNotes();
    fs.writeFileSync(file, seed);
    const stopFile = path.join(dir, 'stop');
    const writer = startWriterProcess(file, stopFile);
    try {
      await waitFor(() => fs.statSync(file).size > seed.length, 'the writer to start', 10_000);
      // Each re-check waits until the writer has added to the file since: it lands in every gap, however slow the machine.
      const grown = async (): Promise<void> => {
        const size = fs.statSync(file).size;
        await waitFor(() => fs.statSync(file).size > size, 'the writer to add a line', 30_000);
      };
      const outcome = await condense({ beforeSwapCheck: grown });
      assert.equal(outcome.ok ? 'ok' : outcome.reason, 'still-growing');
    } finally {
      fs.writeFileSync(stopFile, '');
    }
    const written = await writer;
    const expected = Buffer.concat([seed, ...Array.from({ length: written }, (_, i) => writerLine(i))]);
    assert.ok(written > MAX_CARRY_ROUNDS, `the writer wrote ${written} lines`);
    assert.ok(fs.readFileSync(file).equals(expected), 'the seed and every line of the writer, once, in order');
    assert.deepEqual(tempLeftovers(dir), []);
  });

  describe('a writer that opened the file before the rename and writes just after it (another process)', () => {
    it(`bytes written to the previous file within ${LATE_WRITE_GRACE_MS} ms of the rename are carried onto the new one`, async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      const inode = fs.statSync(file).ino;
      const stale = fs.openSync(file, 'a');
      const late = Buffer.from('late write 遅い\n', 'utf8');
      try {
        // The other process writes during the grace: after the rename, through the descriptor it opened before it.
        const outcome = await condense({
          lateWriteGrace: async () => {
            assert.notEqual(fs.statSync(file).ino, inode, 'renamed already');
            fs.writeSync(stale, late);
          },
        });
        assert.equal(outcome.ok, true, JSON.stringify(outcome));
        if (outcome.ok) assert.equal(outcome.carriedBytes, late.length);
        assert.ok(fs.readFileSync(file).equals(Buffer.concat([Buffer.from(SUMMARY), late])));
        assert.ok(fs.readFileSync(`${file}.bak`).equals(Buffer.concat([seed, late])));
      } finally {
        fs.closeSync(stale);
      }
    });

    it('the known limit: bytes written to the previous file after that grace are kept in memory.md.bak, not in memory.md', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      const stale = fs.openSync(file, 'a');
      try {
        assert.equal((await condense({})).ok, true);
        const late = Buffer.from('much later through an old descriptor\n');
        fs.writeSync(stale, late);
        assert.equal(fs.readFileSync(file, 'utf8'), SUMMARY);
        assert.ok(fs.readFileSync(`${file}.bak`).equals(Buffer.concat([seed, late])), 'not lost: the backup holds it');
      } finally {
        fs.closeSync(stale);
      }
    });
  });
});

function writerLine(i: number): Buffer {
  return Buffer.from(`writer ${i} 書き込み ✍️\n`, 'utf8');
}

/** A child process appending one line per millisecond until `stopFile` exists; resolves to how many it wrote. */
function startWriterProcess(file: string, stopFile: string): Promise<number> {
  const script = `
    const fs = require('node:fs');
    const [file, stop] = process.argv.slice(1);
    const pause = new Int32Array(new SharedArrayBuffer(4));
    let n = 0;
    while (!fs.existsSync(stop)) {
      fs.appendFileSync(file, 'writer ' + n + ' 書き込み ✍️\\n');
      n++;
      Atomics.wait(pause, 0, 0, 1);
    }
    process.stdout.write(String(n));
  `;
  const child = spawn(process.execPath, ['-e', script, file, stopFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`writer exited with ${code}`))));
  });
}
