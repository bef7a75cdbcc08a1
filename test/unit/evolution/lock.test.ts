import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { acquireRunLock, readLock } from '../../../src/core/evolution/lock';
import { removeTempDirs, tempDir } from './helpers';

const busy = (err: unknown): boolean => (err as { kind?: string }).kind === 'busy';

describe('run lock: one run at a time per repository', () => {
  let file: string;
  beforeEach(() => {
    file = path.join(tempDir('candor-lock-'), 'scratch', 'repo.lock');
  });
  afterEach(() => removeTempDirs());

  it('holds pid, host and start time; a second taker is refused until release', () => {
    const lock = acquireRunLock(file);
    const info = readLock(file);
    assert.equal(info?.pid, process.pid);
    assert.equal(info?.host, os.hostname());
    assert.match(info?.started ?? '', /^\d{4}-/);
    assert.throws(() => acquireRunLock(file), busy);
    lock.release();
    assert.equal(fs.existsSync(file), false);
    acquireRunLock(file).release();
  });

  it('a lock of a dead process is taken over and reported', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ pid: dead, host: os.hostname(), started: 'then', token: 't' }));
    const lock = acquireRunLock(file);
    assert.equal(lock.tookOver?.pid, dead);
    assert.equal(readLock(file)?.token, lock.info.token);
    lock.release();
  });

  it('a half-written (unreadable) lock is taken over once it is a few seconds old; a lock of this process no run holds any more too', () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"pid": 12');
    assert.throws(() => acquireRunLock(file), busy, 'just created: its run is still writing it');
    fs.utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    acquireRunLock(file).release();
    fs.writeFileSync(file, JSON.stringify({ pid: process.pid, host: os.hostname(), started: 'then', token: 'forgotten' }));
    acquireRunLock(file).release();
  });

  it('a live process keeps its lock; releasing never removes a lock someone else holds', () => {
    const holder = spawn('sleep', ['30']);
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const theirs = JSON.stringify({ pid: holder.pid, host: os.hostname(), started: 'now', token: 'theirs' });
      fs.writeFileSync(file, theirs);
      assert.throws(() => acquireRunLock(file), (err: unknown) => busy(err) && /pid \d+ on /.test((err as Error).message));
      assert.equal(fs.readFileSync(file, 'utf8'), theirs);
      const other = JSON.stringify({ pid: holder.pid, host: 'another-machine', started: 'now', token: 'remote' });
      fs.writeFileSync(file, other);
      assert.throws(() => acquireRunLock(file), busy, 'a lock from another machine cannot be checked: it stands');
    } finally {
      holder.kill('SIGKILL');
    }
    fs.rmSync(file);
    const mine = acquireRunLock(file);
    fs.writeFileSync(file, JSON.stringify({ pid: 1, host: os.hostname(), started: 'x', token: 'stolen' }));
    mine.release();
    assert.equal(readLock(file)?.token, 'stolen');
  });
});
