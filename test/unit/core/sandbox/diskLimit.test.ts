import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runGate, type GateOptions, type GateResult } from '../../../../src/core/evolution/testGate';
import { measureFolders } from '../../../../src/core/sandbox/diskUsage';
import { diskVerdict, floorBytes, type DiskMeasure, type FreeSpace } from '../../../../src/core/sandbox/diskWatch';
import { heldOpenBytes } from '../../../../src/core/sandbox/heldOpen';
import { NO_SANDBOX, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { notRoot, skipUnless } from '../../../helpers/preconditions';
import { removeTempDirs, requiredSandbox, skipUnlessSandbox, tempDir } from '../evolution/helpers';

/**
 * The disk limit against what a walk does not see: each dodge is first shown
 * to work on the plain host (its reservation takes the disk while a plain
 * walk misses it), then stopped in the gate, as root in real bubblewrap,
 * under a 64 MiB limit, so no case needs more than 512 MiB of disk for a
 * moment. Each command that makes a reservation then waits to be killed: a
 * limit that fails shows as a timeout, never as a pass.
 */
const MiB = 1024 * 1024;

/** 256 MiB allocated: the filesystem may add a block or two of its own (an extent tree) on top. */
function assertHolds(bytes: number, what: string): void {
  assert.ok(bytes >= 256 * MiB && bytes < 257 * MiB, `${what}: ${bytes} bytes allocated`);
}

const LIMITS = { processes: 64, memoryMiB: 512, fileSizeMiB: 1024, diskMiB: 64 };
/** Folders 25 deep, each name 200 characters: 5,000 characters, past PATH_MAX. */
const DEEP = `n=$(printf 'd%.0s' $(seq 200)); i=0; while [ $i -lt 25 ]; do mkdir "$n" && cd -P "$n" || exit 1; i=$((i + 1)); done`;
const HOLD = 'exec sleep infinity';
const CHILD = path.join(__dirname, 'diskLimitChild.ts');

describe('the disk limit counts everything: each dodge works on the plain host, and is stopped in the gate (64 MiB)', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let clone: string;
  before(async function () {
    await skipUnlessSandbox(this);
    skipUnless(this, notRoot());
    sandbox = await requiredSandbox();
  });
  beforeEach(() => {
    clone = tempDir('candor-disk-');
    fs.mkdirSync(path.join(clone, '.git'));
  });
  // Node's own removal stops past PATH_MAX: GNU rm does not.
  afterEach(() => {
    spawnSync('rm', ['-rf', '--one-file-system', clone]);
    removeTempDirs();
  });

  const gate = (command: string, options: Partial<GateOptions> = {}): Promise<GateResult> => runGate([{ name: 'test', command }], { cwd: clone, sandbox, timeoutMs: 60_000, limits: LIMITS, ...options });
  const host = (command: string): Promise<GateResult> => runGate([{ name: 'test', command }], { cwd: clone, sandbox: NO_SANDBOX, timeoutMs: 60_000 });
  const measured = async (folder: string): Promise<number> => (await measureFolders([folder]))?.bytes ?? assert.fail('measured');

  it('a posix_fallocate reservation of 256 MiB under 25 folders of 200 characters: a walk by whole paths finds none of it; the gate is stopped, measured exactly', async () => {
    const reserve = `${DEEP}; fallocate -l 256M reserved && echo reserved`;
    const trap = await host(reserve);
    assert.match(trap.tail, /reserved/, trap.tail);
    assert.ok(walkByPaths(clone) < MiB, 'the trap: a walk by whole paths (all Node has) finds under 1 MiB');
    const deepest = spawnSync('sh', ['-c', `${DEEP.replace('mkdir "$n" && ', '')}; stat -c %b reserved`], { cwd: clone, encoding: 'utf8' });
    assertHolds(Number(deepest.stdout) * 512, 'and the disk holds all 256 MiB there');
    spawnSync('rm', ['-rf', path.join(clone, 'd'.repeat(200))]);

    const result = await gate(`${reserve}; ${HOLD}`);
    assert.equal(result.timedOut, false, 'stopped by the limit, not the timeout');
    assert.match(result.limitHit ?? '', /^hit the disk limit \(64 MiB\): the clone and home held 25[6-9] MiB$/, result.tail);
    assert.equal(result.limits?.disk, 'filesystem', 'as root, with a memory cgroup: the throwaway pair in memory, the clone polled');
  });

  it('a file of 256 MiB deleted while a running process holds it open: no walk sees it, its descriptor does; the gate is stopped, the held file named', async () => {
    const hold = `fallocate -l 256M held && exec 9<held && rm held && echo held-open && ${HOLD}`;
    const holder = await holding(spawn('sh', ['-c', hold], { cwd: clone, stdio: ['ignore', 'pipe', 'ignore'] }), 'held-open');
    try {
      assert.ok((await measured(clone)) < MiB, 'the trap: a walk of the folder finds under 1 MiB');
      assertHolds(fs.statSync(`/proc/${holder.pid}/fd/9`).blocks * 512, 'while the disk still holds all of it');
    } finally {
      holder.kill('SIGKILL');
    }

    const result = await gate(hold);
    assert.equal(result.timedOut, false);
    assert.match(result.limitHit ?? '', /^hit the disk limit \(64 MiB\): the clone and home held 25[6-9] MiB, 256 MiB of it in files deleted but still held open$/, result.tail);
  });

  it('a 256 MiB file passed over a socket and closed: no walk and no descriptor shows it, free space does; the gate is stopped, and the reason says it read free space alone', async () => {
    // The file lives only in the receiving end's queue, a message never read.
    const script = [
      'import os, signal, socket',
      'a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)',
      "fd = os.open('passed', os.O_RDWR | os.O_CREAT, 0o600)",
      'os.posix_fallocate(fd, 0, 512 << 20)',
      "socket.send_fds(a, [b'x'], [fd])",
      "os.close(fd); os.unlink('passed')",
      "print('in flight', flush=True)",
      'signal.pause()',
    ].join('\n');
    fs.writeFileSync(path.join(clone, 'pass.py'), script);
    const before = fs.statfsSync(clone);
    const passer = await holding(spawn('/usr/bin/python3', ['pass.py'], { cwd: clone, stdio: ['ignore', 'pipe', 'ignore'] }), 'in flight');
    try {
      const after = fs.statfsSync(clone);
      assert.ok((before.bfree - after.bfree) * after.bsize >= 400 * MiB, 'the trap: the disk lost its 512 MiB');
      assert.ok((await measured(clone)) < MiB, 'a walk finds under 1 MiB');
      assert.equal(heldOpenBytes([passer.pid ?? 0], new Set([fs.statSync(clone).dev])).size, 0, 'and no descriptor or mapping of the process holds it');
    } finally {
      passer.kill('SIGKILL');
    }

    const result = await gate('/usr/bin/python3 pass.py');
    assert.equal(result.timedOut, false);
    assert.match(result.limitHit ?? '', /^hit the disk limit \(64 MiB\): the disk lost \d+ MiB more than the clone and home \(\d+ MiB\) account for, .*read from free space alone: another process writing to the same disk would look the same\)$/, result.tail);
  });

  it('Candor not root: a 256 MiB reservation in a folder made unreadable (chmod 000) hides from its walk; the gate says it could not measure it, and stops', async function () {
    // An account the host has (Candor asks the passwd file who it runs as).
    const uid = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout) || assert.fail('no "nobody" account');
    fs.chmodSync(path.dirname(clone), 0o755);
    fs.chmodSync(clone, 0o755);
    spawnSync('chown', ['-R', `${uid}:${uid}`, clone]);
    const home = tempDir('candor-disk-home-');
    fs.chownSync(home, uid, uid);
    const asUser = (file: string, args: readonly string[]): ReturnType<typeof spawnSync> =>
      spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', file, ...args], { cwd: clone, encoding: 'utf8', timeout: 90_000, env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: home, TMPDIR: home, LC_ALL: 'C' } });
    const hide = 'mkdir hide && fallocate -l 256M hide/reserved && chmod 000 hide && echo hidden';
    assert.match(String(asUser('/bin/sh', ['-c', hide]).stdout), /hidden/);
    assert.match(String(asUser('ls', ['hide']).stderr), /Permission denied/, 'the trap: its own uid cannot walk into it');
    assert.ok((await measured(path.join(clone, 'hide'))) >= 256 * MiB, 'while the disk holds 256 MiB there');
    fs.rmSync(path.join(clone, 'hide'), { recursive: true });

    const child = asUser(process.execPath, ['--require', require.resolve('tsx/cjs'), CHILD, clone, `${hide}; ${HOLD}`]);
    assert.equal(child.status, 0, String(child.stderr));
    const result = JSON.parse(String(child.stdout)) as { uid: number; limitHit?: string; limits?: { disk: string }; timedOut: boolean; tail: string };
    assert.equal(result.uid, uid);
    assert.equal(result.timedOut, false, result.tail);
    assert.equal(result.limits?.disk, 'poll', 'no cgroup for an ordinary uid: the throwaway pair are host folders, polled');
    assert.match(result.limitHit ?? '', /^hit the disk limit \(64 MiB\): cannot read directory '.*\/hide': Permission denied, and what cannot be measured counts as over the limit$/);
  });

  it('the throwaway home in memory: 100 MiB written to $HOME reach the host disk without limits; with them the write stops at 64 MiB (No space left), and the memory cgroup pays for what it holds', async () => {
    const fill = (mib: number): string => `dd if=/dev/zero of="$HOME/fill" bs=1M count=${mib} 2>&1; test "$(stat -c %s "$HOME/fill")" -eq ${mib * MiB}`;
    const trap = await gate(fill(100), { limits: undefined });
    assert.equal(trap.passed, true, `the trap: without limits the host home takes all of it: ${trap.tail}`);

    const bounded = await gate(fill(100));
    assert.equal(bounded.passed, false);
    assert.match(bounded.tail, /No space left on device[\s\S]*6710\d{4} bytes \(67 MB, 64 MiB\) copied/, 'the in-memory home held 64 MiB (its git config beside) and no more');
    assert.equal(bounded.limitHit, 'may have hit the disk limit (64 MiB)');
    assert.equal(bounded.limits?.disk, 'filesystem');

    // Its pages are charged to the gate's memory cgroup: a home of 1 GiB under a memory limit of 128 MiB.
    const charged = await gate(fill(400), { limits: { ...LIMITS, memoryMiB: 128, diskMiB: 1024 } });
    assert.equal(charged.limitHit, 'hit the memory limit (128 MiB)', charged.tail);
  });

  it('a gate whose writes leave its disk under the larger of 1 GiB and 5% free is stopped, whatever its disk limit: on a 256 MiB disk, 8 MiB are enough', async function () {
    const disk = tempDir('candor-small-disk-');
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', disk], { encoding: 'utf8' });
    skipUnless(this, mounted.status === 0 ? undefined : `a tmpfs cannot be mounted here: ${mounted.stderr.trim()}`);
    try {
      clone = path.join(disk, 'clone');
      fs.mkdirSync(path.join(clone, '.git'), { recursive: true });
      const write = 'fallocate -l 8M data && echo wrote';
      assert.match((await gate(write, { limits: undefined })).tail, /wrote/, 'the trap: nothing else stops it');
      fs.rmSync(path.join(clone, 'data'));

      const result = await gate(`${write}; ${HOLD}`, { limits: { ...LIMITS, diskMiB: 1024 } });
      assert.equal(result.timedOut, false);
      assert.match(result.limitHit ?? '', /^left less than 1\.0 GiB free on the disk of .*clone \(24\d MiB free; the floor is the larger of 1 GiB and 5% of the disk\), having written 8 MiB there$/, result.tail);
    } finally {
      spawnSync('umount', ['--lazy', disk]);
    }
  });
});

/** `child`, once it printed `marker`: it then holds what it made until killed. */
function holding(child: ChildProcess, marker: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(marker)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before "${marker}": ${out}`)));
  });
}

/** The bytes under `root` as a walk by whole paths counts them (readdir and lstat, as Node must): what it cannot reach, it skips. */
function walkByPaths(root: string): number {
  let bytes = 0;
  const pending = [root];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    let names: string[] = [];
    try {
      names = fs.readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      try {
        const stats = fs.lstatSync(path.join(folder, name));
        bytes += stats.blocks * 512;
        if (stats.isDirectory()) pending.push(path.join(folder, name));
      } catch {
        // too deep: skipped
      }
    }
  }
  return bytes;
}

describe('the disk verdict, decided from plain inputs', () => {
  const DEV = 7;
  const GiB = 1024 * MiB;
  const free = (bytes: number, files = 1_000_000_000, size = 100 * GiB): ReadonlyMap<number, FreeSpace> => new Map([[DEV, { bytes, avail: bytes, size, files }]]);
  const measure = (held: number, freeBytes: number, more: Partial<DiskMeasure> = {}): DiskMeasure => ({ free: free(freeBytes), held: new Map([[DEV, held]]), nameless: 0, ...more });
  const base = measure(10 * MiB, 50 * GiB);
  const verdict = (now: DiskMeasure, running = true): string | undefined => diskVerdict({ limitMiB: 64, base, now, running, where: () => '/clone' });

  it('a loss of free space that no measure accounts for is carried from one measure to the next, and goes once one does', () => {
    const lost = 50 * GiB - 100 * MiB;
    assert.match(verdict(measure(10 * MiB, lost)) ?? '', /the disk lost 100 MiB more than the clone and home \(10 MiB\) account for/);
    assert.match(verdict(measure(12 * MiB, lost)) ?? '', /the disk lost 98 MiB more/, 'a later measure that finds 2 MiB more still carries the rest');
    assert.match(verdict(measure(110 * MiB, lost)) ?? '', /^hit the disk limit \(64 MiB\): the clone and home held 110 MiB$/, 'measured: the exact verdict');
    assert.equal(diskVerdict({ limitMiB: 200, base, now: measure(110 * MiB, lost), running: true, where: () => '/clone' }), undefined, 'accounted for, under a higher limit: nothing');
  });

  it('at the command\'s end, with its processes gone, free space alone convicts nothing: only the measure does', () => {
    assert.equal(verdict(measure(10 * MiB, 50 * GiB - 100 * MiB), false), undefined);
    assert.match(verdict(measure(100 * MiB, 50 * GiB - 100 * MiB), false) ?? '', /held 100 MiB$/);
  });

  it('what cannot be measured is over the limit; files held open are named', () => {
    assert.equal(verdict(measure(0, 50 * GiB, { unmeasurable: "cannot read directory '/clone/x': Permission denied" })), "hit the disk limit (64 MiB): cannot read directory '/clone/x': Permission denied, and what cannot be measured counts as over the limit");
    assert.equal(verdict(measure(300 * MiB, 50 * GiB, { nameless: 256 * MiB })), 'hit the disk limit (64 MiB): the clone and home held 300 MiB, 256 MiB of it in files deleted but still held open');
  });

  it('under the larger of 1 GiB and 5% free, a command that wrote anything is stopped; one that wrote nothing is not', () => {
    const small = (held: number, freeBytes: number): DiskMeasure => ({ free: new Map([[DEV, { bytes: freeBytes, avail: freeBytes, size: 10 * GiB, files: 1000 }]]), held: new Map([[DEV, held]]), nameless: 0 });
    const start = small(10 * MiB, 1 * GiB + 4 * MiB);
    const judge = (now: DiskMeasure, running = true): string | undefined => diskVerdict({ limitMiB: 4096, base: start, now, running, where: () => '/clone' });
    assert.equal(judge(small(10 * MiB, 1 * GiB + 4 * MiB)), undefined, 'nothing written');
    assert.match(judge(small(18 * MiB, 1 * GiB - 4 * MiB)) ?? '', /^left less than 1\.0 GiB free on the disk of \/clone \(1020 MiB free; .*having written 8 MiB there$/);
    assert.equal(judge(small(10 * MiB, 1 * GiB - 4 * MiB), false), undefined, 'at the end, another process\'s writes are not the command\'s');
    assert.equal(floorBytes(10 * GiB), GiB);
    assert.equal(floorBytes(100 * GiB), 5 * GiB);
  });

  it('more than a million inodes gone while the command runs end it, said as read from the free inode count', () => {
    const now: DiskMeasure = { free: free(50 * GiB, 1_000_000_000 - 1_000_001), held: new Map([[DEV, 10 * MiB]]), nameless: 0 };
    assert.match(verdict(now) ?? '', /^hit the disk limit \(64 MiB\): the disk lost 1,000,001 inodes while the command ran, more than 1,000,000/);
    assert.equal(verdict(now, false), undefined);
  });
});
