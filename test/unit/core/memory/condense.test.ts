import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { condenseMemory, tempFileFor, type CondenseOptions, type CondenseOutcome } from '../../../../src/core/memory/condense';
import { appendEntry } from '../../../../src/core/memory/memory';

import { seedNotes, startModelServer, tempFolder, tempLeftovers, waitFor, type ModelServer } from './helpers';
import { MemoryLogger } from '../../../helpers/core';

const SUMMARY = '# Memory\n- tests: npm test\n';
const PID = 4242;

describe('memory condense: the guarded swap', () => {
  let model: ModelServer;
  let dir: string;
  let file: string;
  let log: MemoryLogger;

  beforeEach(async () => {
    model = await startModelServer();
    dir = tempFolder();
    file = path.join(dir, 'memory.md');
    log = new MemoryLogger();
  });
  afterEach(async () => model.close());

  function condense(extra: Partial<CondenseOptions> = {}): Promise<CondenseOutcome> {
    return condenseMemory({ file, model: model.model, unsavedFiles: () => [], pid: PID, log, ...extra });
  }

  /** Starts a condense whose summary request the server holds open, and waits until the server has it. */
  async function condenseWhileHeld(holdMs = 300, extra: Partial<CondenseOptions> = {}): Promise<{ running: Promise<CondenseOutcome> }> {
    model.use({ rules: [{ respond: { text: SUMMARY }, holdMs }] });
    const seen = model.server.requests.length;
    const running = condense(extra);
    await waitFor(() => model.server.requests.length > seen, 'the summary request');
    return { running }; // wrapped: an async function would flatten a returned promise
  }

  function assertFailed(outcome: CondenseOutcome, reason: string): void {
    assert.equal(outcome.ok, false, `expected ${reason}, got ${JSON.stringify(outcome)}`);
    if (!outcome.ok) assert.equal(outcome.reason, reason, outcome.detail);
    assert.deepEqual(tempLeftovers(dir), [], 'the temp file is gone');
  }

  describe('appends during the summary request are carried verbatim', () => {
    it('swaps in the summary when nothing was appended; the backup holds the previous content', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      model.use({ rules: [{ respond: { text: SUMMARY } }] });
      const outcome = await condense();
      assert.deepEqual(outcome, { ok: true, beforeBytes: seed.length, afterBytes: Buffer.byteLength(SUMMARY), carriedBytes: 0, rounds: 0 });
      assert.equal(fs.readFileSync(file, 'utf8'), SUMMARY);
      assert.ok(fs.readFileSync(`${file}.bak`).equals(seed));
      assert.deepEqual(tempLeftovers(dir), []);
      assert.match(model.server.requests[0]?.lastUser ?? '', /note 39: the build runs/, 'the model saw the file');
      assert.ok(log.lines.some((l) => l.includes('carriedBytes=0')), log.lines.join('\n'));
    });

    it('an append made while the request is pending is carried byte for byte; the backup holds snapshot + append', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      const { running } = await condenseWhileHeld();
      const appended = Buffer.from('\n## 2026-11-30T11:00:00Z\nlate fact: 新しい事実 🎉\n', 'utf8');
      fs.appendFileSync(file, appended);
      const outcome = await running;
      assert.deepEqual(outcome, {
        ok: true,
        beforeBytes: seed.length + appended.length,
        afterBytes: Buffer.byteLength(SUMMARY) + appended.length,
        carriedBytes: appended.length,
        rounds: 1,
      });
      assert.ok(fs.readFileSync(file).equals(Buffer.concat([Buffer.from(SUMMARY), appended])));
      assert.ok(fs.readFileSync(`${file}.bak`).equals(Buffer.concat([seed, appended])));
      assert.ok(log.lines.some((l) => l.includes(`carriedBytes=${appended.length}`)), log.lines.join('\n'));
      assert.deepEqual(tempLeftovers(dir), []);
    });

    it('entries from the remember tool written by a real async writer during the request all survive, once each', async () => {
      fs.writeFileSync(file, seedNotes());
      const { running } = await condenseWhileHeld(250);
      let n = 0;
      const appends: Array<Promise<number>> = [];
      const remember = (): void => void appends.push(appendEntry(file, `remembered ${n++} ✍️ 記憶`, new Date()));
      // One entry while the request is surely held, then more as a timer fires, some of them during the swap.
      remember();
      await appends[0];
      const writer = setInterval(remember, 4);
      const outcome = await running;
      clearInterval(writer);
      // Every call of the tool has returned (calls made just before the swap ended may still be on their way to the queue).
      await Promise.all(appends);
      await appendEntry(file, 'after the condense', new Date());
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      assert.ok(outcome.ok && outcome.carriedBytes > 0, 'entries written during the request were carried');
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(text.startsWith(SUMMARY));
      for (let i = 0; i < n; i++) assert.equal(text.split(`\nremembered ${i} ✍️ 記憶\n`).length, 2, `entry ${i} once`);
      assert.ok(text.endsWith('\nafter the condense\n'));
    });

    it('CRLF lines and a file without a trailing newline keep their bytes in the carried part', async () => {
      const seed = Buffer.from('# Memory\r\n' + 'a note with CRLF\r\n'.repeat(30) + 'last line, no newline', 'utf8');
      fs.writeFileSync(file, seed);
      const { running } = await condenseWhileHeld();
      const appended = Buffer.from(' continued\r\n\r\nnext\rlone CR\r\nno newline here either', 'utf8');
      fs.appendFileSync(file, appended);
      const outcome = await running;
      assert.equal(outcome.ok, true, JSON.stringify(outcome));
      const after = fs.readFileSync(file);
      assert.ok(after.subarray(Buffer.byteLength(SUMMARY)).equals(appended), 'carried bytes are verbatim');
      assert.ok(fs.readFileSync(`${file}.bak`).equals(Buffer.concat([seed, appended])));
    });
  });

  describe('any other change during the request aborts and leaves the file as the other writer left it', () => {
    const changes: Array<[string, string, (file: string, seed: Buffer) => void]> = [
      ['an edit in the middle', 'source-changed', (f, seed) => {
        const edited = Buffer.from(seed);
        edited[100] = 0x58;
        fs.writeFileSync(f, edited);
      }],
      ['an edit in the middle plus an append', 'source-changed', (f, seed) => {
        fs.writeFileSync(f, Buffer.concat([seed.subarray(0, 50), Buffer.from('EDIT'), seed.subarray(54), Buffer.from('\nappended\n')]));
      }],
      ['a truncation', 'source-changed', (f, seed) => fs.truncateSync(f, seed.length - 40)],
      ['a truncation to nothing', 'source-changed', (f) => fs.truncateSync(f, 0)],
      ['a deletion', 'source-check-failed', (f) => fs.unlinkSync(f)],
      ['a replacement by another file', 'source-changed', (f) => {
        fs.writeFileSync(`${f}.other`, '# Someone else\'s memory\n');
        fs.renameSync(`${f}.other`, f);
      }],
      ['a replacement by a directory', 'source-check-failed', (f) => {
        fs.unlinkSync(f);
        fs.mkdirSync(f);
      }],
    ];

    for (const [name, reason, change] of changes) {
      it(`${name} → ${reason}`, async () => {
        const seed = seedNotes();
        fs.writeFileSync(file, seed);
        const { running } = await condenseWhileHeld(200);
        change(file, seed);
        const left = fs.existsSync(file) && fs.statSync(file).isFile() ? fs.readFileSync(file) : undefined;
        const outcome = await running;
        assertFailed(outcome, reason);
        if (left) assert.ok(fs.readFileSync(file).equals(left), 'the file is exactly as the other writer left it');
        else assert.ok(!fs.existsSync(file) || fs.statSync(file).isDirectory(), 'nothing was recreated');
        assert.equal(fs.existsSync(`${file}.bak`), false, 'no backup: nothing was swapped');
        assert.ok(log.lines.some((l) => l.includes(`(${reason})`)), log.lines.join('\n'));
      });
    }
  });

  describe('refusals before the model is called', () => {
    const invalid: Array<[string, number[]]> = [
      ['a lone continuation byte', [0x80]],
      ['an overlong form', [0xc0, 0xaf]],
      ['a truncated multibyte sequence at the end', [0xe2, 0x82]],
    ];
    for (const [name, bad] of invalid) {
      it(`invalid UTF-8, ${name} → source-encoding-invalid, and the server saw no request`, async () => {
        const bytes = Buffer.concat([seedNotes(), Buffer.from(bad), name.includes('end') ? Buffer.alloc(0) : Buffer.from('\ntail\n')]);
        fs.writeFileSync(file, bytes);
        const outcome = await condense();
        assertFailed(outcome, 'source-encoding-invalid');
        assert.equal(model.server.requests.length, 0);
        assert.ok(fs.readFileSync(file).equals(bytes));
      });
    }

    it('an unsaved editor buffer of the file → source-unsaved, no request', async () => {
      fs.writeFileSync(file, seedNotes());
      const outcome = await condense({ unsavedFiles: () => [path.join(dir, '.', 'sub', '..', 'memory.md')] });
      assertFailed(outcome, 'source-unsaved');
      assert.equal(model.server.requests.length, 0);
    });

    it('an unsaved buffer that appears during the request → source-unsaved before the swap', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      let dirty: string[] = [];
      const { running } = await condenseWhileHeld(150, { unsavedFiles: () => dirty });
      dirty = [file];
      assertFailed(await running, 'source-unsaved');
      assert.ok(fs.readFileSync(file).equals(seed));
    });

    it('a missing file → source-check-failed, no request', async () => {
      assertFailed(await condense(), 'source-check-failed');
      assert.equal(model.server.requests.length, 0);
    });

    it('an empty file → not-smaller, no request', async () => {
      fs.writeFileSync(file, '');
      assertFailed(await condense(), 'not-smaller');
      assert.equal(model.server.requests.length, 0);
    });

    it('cancelled before it starts → cancelled, no request', async () => {
      fs.writeFileSync(file, seedNotes());
      const controller = new AbortController();
      controller.abort();
      assertFailed(await condense({ signal: controller.signal }), 'cancelled');
      assert.equal(model.server.requests.length, 0);
    });
  });

  describe('failures after the request', () => {
    it('a summary that is not smaller is not swapped', async () => {
      const seed = seedNotes(3);
      fs.writeFileSync(file, seed);
      model.use({ rules: [{ respond: { text: 'x'.repeat(seed.length) } }] });
      assertFailed(await condense(), 'not-smaller');
      assert.ok(fs.readFileSync(file).equals(seed));
      assert.equal(fs.existsSync(`${file}.bak`), false);
    });

    it('an HTTP error → model-failed, file untouched', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      model.use({ rules: [{ respond: { error: { status: 500, message: 'boom' } } }] });
      assertFailed(await condense(), 'model-failed');
      assert.ok(fs.readFileSync(file).equals(seed));
    });

    it('an empty summary → model-failed: memory is never replaced by nothing', async () => {
      fs.writeFileSync(file, seedNotes());
      model.use({ rules: [{ respond: { text: '  \n' } }] });
      assertFailed(await condense(), 'model-failed');
    });

    it('cancelling while the request is held → cancelled, file untouched', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      const controller = new AbortController();
      const { running } = await condenseWhileHeld(2000, { signal: controller.signal });
      controller.abort();
      assertFailed(await running, 'cancelled');
      assert.ok(fs.readFileSync(file).equals(seed));
    });

    it('a temp file that cannot be written → write-failed, file untouched', async () => {
      const seed = seedNotes();
      fs.writeFileSync(file, seed);
      fs.mkdirSync(tempFileFor(file, PID));
      model.use({ rules: [{ respond: { text: SUMMARY } }] });
      const outcome = await condense();
      assert.equal(outcome.ok ? 'ok' : outcome.reason, 'write-failed');
      assert.ok(fs.readFileSync(file).equals(seed));
    });

    it('a leftover temp file of a crashed run with the same pid does not block the next condense', async () => {
      fs.writeFileSync(file, seedNotes());
      fs.writeFileSync(tempFileFor(file, PID), 'stale half-written summary');
      model.use({ rules: [{ respond: { text: SUMMARY } }] });
      assert.equal((await condense()).ok, true);
      assert.equal(fs.readFileSync(file, 'utf8'), SUMMARY);
      assert.deepEqual(tempLeftovers(dir), []);
    });

    it('a second condense of the same file while one runs → busy; the first still succeeds', async () => {
      fs.writeFileSync(file, seedNotes());
      const { running: first } = await condenseWhileHeld(150);
      assertFailed(await condense(), 'busy');
      assert.equal((await first).ok, true);
    });
  });

  (process.platform === 'win32' ? it.skip : it)('a memory file that is a symbolic link: the target is condensed, the link stays', async () => {
    const target = path.join(dir, 'notes', 'real.md');
    fs.mkdirSync(path.dirname(target));
    const seed = seedNotes();
    fs.writeFileSync(target, seed);
    fs.symlinkSync(target, file);
    model.use({ rules: [{ respond: { text: SUMMARY } }] });
    assert.equal((await condense()).ok, true);
    assert.ok(fs.lstatSync(file).isSymbolicLink());
    assert.equal(fs.readFileSync(target, 'utf8'), SUMMARY);
    assert.ok(fs.readFileSync(`${target}.bak`).equals(seed));
  });
});
