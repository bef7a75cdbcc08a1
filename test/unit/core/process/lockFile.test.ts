import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockBusyError, readLock, tryLock, withLock } from '../../../../src/core/process/lockFile';
import { eventually } from '../sandbox/sandboxHelpers';

const busy = (err: unknown): boolean => err instanceof LockBusyError && err.kind === 'busy';

function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '0']).pid;
  assert.ok(pid !== undefined);
  return pid;
}

describe('lock files: one rule for the run lock and the traces.sqlite write lock', () => {
  let dir: string;
  let file: string;
  let holder: ChildProcess | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-lock-'));
    file = path.join(dir, 'scratch', 'repo.lock');
  });
  afterEach(() => {
    holder?.kill('SIGKILL');
    holder = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A live process of someone else's, and a lock in its name. */
  function lockOfLiveProcess(host = os.hostname()): string {
    holder = spawn('sleep', ['30']);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const theirs = JSON.stringify({ pid: holder.pid, host, started: 'now', token: 'theirs' });
    fs.writeFileSync(file, theirs);
    return theirs;
  }

  it('holds pid, host and start time; a second taker is refused until release', () => {
    const names = { holderName: 'another evolution run', holderOf: 'for this repository' };
    const lock = tryLock(file, names);
    const info = readLock(file);
    assert.equal(info?.pid, process.pid);
    assert.equal(info?.host, os.hostname());
    assert.match(info?.started ?? '', /^\d{4}-/);
    assert.throws(() => tryLock(file, names), (err: unknown) => busy(err) && /^another evolution run is in progress for this repository \(pid \d+ on /.test((err as Error).message));
    lock.release();
    assert.equal(fs.existsSync(file), false);
    tryLock(file).release();
  });

  it('a lock of a dead process is taken over and reported', () => {
    const dead = deadPid();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ pid: dead, host: os.hostname(), started: 'then', token: 't' }));
    const lock = tryLock(file);
    assert.equal(lock.tookOver?.pid, dead);
    assert.equal(readLock(file)?.token, lock.info.token);
    lock.release();
  });

  it('a half-written (unreadable) lock is taken over once it is a few seconds old; a lock of this process no holder has any more too', () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"pid": 12');
    assert.throws(() => tryLock(file), busy, 'just created: its owner is still writing it');
    fs.utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    tryLock(file).release();
    fs.writeFileSync(file, JSON.stringify({ pid: process.pid, host: os.hostname(), started: 'then', token: 'forgotten' }));
    tryLock(file).release();
  });

  it('a live process keeps its lock, also one from another host; releasing never removes a lock someone else holds', () => {
    const theirs = lockOfLiveProcess();
    assert.throws(() => tryLock(file), (err: unknown) => busy(err) && /pid \d+ on /.test((err as Error).message));
    assert.equal(fs.readFileSync(file, 'utf8'), theirs);
    fs.writeFileSync(file, JSON.stringify({ pid: deadPid(), host: 'another-machine', started: 'now', token: 'remote' }));
    assert.throws(() => tryLock(file), busy, 'a lock from another machine cannot be checked: it stands');
    fs.rmSync(file);
    const mine = tryLock(file);
    fs.writeFileSync(file, JSON.stringify({ pid: 1, host: os.hostname(), started: 'x', token: 'stolen' }));
    mine.release();
    assert.equal(readLock(file)?.token, 'stolen');
  });

  it('staleMs: a live pid\'s lock older than that is stale (a reused pid); younger, it stands', () => {
    lockOfLiveProcess();
    assert.throws(() => tryLock(file, { staleMs: 60_000 }), busy);
    fs.utimesSync(file, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    assert.throws(() => tryLock(file), busy, 'without staleMs age does not matter');
    const lock = tryLock(file, { staleMs: 60_000 });
    assert.equal(lock.tookOver?.token, 'theirs');
    lock.release();
  });

  it('withLock waits for a holder in this process, then runs; never two at once', async () => {
    let inside = 0;
    let most = 0;
    const work = async (): Promise<void> => {
      inside++;
      most = Math.max(most, inside);
      // Yield to the others trying meanwhile: two holders at once would both be inside here.
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withLock(file, work, { timeoutMs: 5_000 })));
    assert.equal(most, 1);
    assert.equal(fs.existsSync(file), false, 'released');
  });

  it('withLock gives up after its timeout on a live holder, leaving the lock alone; a dead holder\'s lock is broken', async () => {
    const theirs = lockOfLiveProcess();
    // A clock the waits move: it gives up once past the timeout, not before, whatever the machine's speed.
    let now = Date.parse('2026-01-01T00:00:00Z');
    const slept: number[] = [];
    const clock = { clock: () => new Date(now), sleep: async (ms: number) => { slept.push(Math.round(ms)); now += Math.round(ms); } };
    await assert.rejects(withLock(file, () => 'ran', { timeoutMs: 200, ...clock }), busy);
    const waited = slept.reduce((sum, ms) => sum + ms, 0);
    assert.ok(waited >= 200 && waited - (slept.at(-1) ?? 0) <= 200, `gave up after waiting ${waited} ms in ${slept.length} pauses`);
    assert.ok(slept.length > 5, 'and tried again between the pauses');
    assert.equal(fs.readFileSync(file, 'utf8'), theirs);
    fs.writeFileSync(file, JSON.stringify({ pid: deadPid(), token: 'gone', ts: Date.now() }));
    assert.equal(await withLock(file, () => 'ran', { timeoutMs: 2_000 }), 'ran');
    assert.equal(fs.existsSync(file), false);
  });

  it('the lock a process holds is seen by another process: a child waits until the parent releases', async () => {
    const lock = tryLock(file);
    const script = `
      const { withLock } = require(${JSON.stringify(path.resolve(__dirname, '../../../../src/core/process/lockFile.ts'))});
      // Each pause after a busy try says so: the parent sees the child wait.
      const sleep = (ms) => { process.stdout.write('.'); return new Promise((resolve) => setTimeout(resolve, ms)); };
      withLock(${JSON.stringify(file)}, () => process.stdout.write('got it'), { timeoutMs: 600000, sleep }).catch((e) => { process.stdout.write(String(e)); });
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    assert.ok(await eventually(() => out.length >= 3, 60_000), `the child never waited: ${out}`);
    assert.match(out, /^\.+$/, 'the child found the lock taken, more than once, and waits');
    lock.release();
    await new Promise((resolve) => child.on('close', resolve));
    assert.match(out, /^\.+got it$/);
  });
});
