import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runInvocation, type CommandOptions, type CommandResult, type GateLimits } from '../../../../src/core/sandbox/command';
import { cgroupFolder, parseCgroupMounts, parseMembership } from '../../../../src/core/sandbox/cgroupMounts';
import { OutputSigns, limitReason, opensWithOpenerCredentials, prepareLimits, type PreparedLimits } from '../../../../src/core/sandbox/limits';
import type { GateCgroup } from '../../../../src/core/sandbox/cgroup';
import { NO_SANDBOX, openInputs, type Invocation, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { processesMatching, removeTempDirs, requiredSandbox, skipUnlessSandbox, tempDir } from '../evolution/helpers';
import { notRoot, skipUnless } from '../../../helpers/preconditions';

/**
 * Every bomb here is bounded by its own loop, so a limit that fails costs
 * the machine a few hundred sleeping processes, 1 GiB of memory or 200 MiB
 * of disk for a moment, never more. Each first runs without limits, to show
 * the bomb really does what it says, then with them.
 */
const GATE_UID = 64999;
const MiB = 1024 * 1024;

describe('gate limits', () => {
  let dir: string;
  beforeEach(function () {
    // The cgroup and the uid switch need root (CI runs as root); elsewhere there is nothing to enforce them with.
    skipUnless(this, notRoot());
    dir = tempDir('candor-limits-');
    fs.chmodSync(dir, 0o777);
  });
  afterEach(() => removeTempDirs());

  const limitsFor = (overrides: Partial<GateLimits> = {}): GateLimits => ({ processes: 64, memoryMiB: 256, fileSizeMiB: 1024, diskMiB: 1024, diskPaths: [dir], ...overrides });
  const run = (command: string, options: Partial<CommandOptions> = {}): Promise<CommandResult> =>
    runInvocation(NO_SANDBOX.wrap(command, { cwd: dir, home: dir, tmp: dir, network: false, depsWritable: false }), {
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, LC_ALL: 'C' },
      timeoutMs: 60_000,
      ...options,
    });
  /** A needle in each sleeper's command line, so the test can find its own processes on the host. */
  const needle = (): string => `${30 + Math.random()}`.slice(0, 12);
  const forkBomb = (seconds: string): string => `i=0; while [ $i -lt 300 ]; do sleep ${seconds} & i=$((i + 1)); done; echo spawned $i`;
  const gone = async (seconds: string): Promise<boolean> => {
    const deadline = Date.now() + 5000;
    while (processesMatching(`sleep ${seconds}`).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    return processesMatching(`sleep ${seconds}`).length === 0;
  };
  const leftCgroups = (): string[] => {
    const membership = parseMembership(fs.readFileSync('/proc/self/cgroup', 'utf8'));
    const left: string[] = [];
    for (const mount of parseCgroupMounts(fs.readFileSync('/proc/self/mountinfo', 'utf8'))) {
      const where = mount.version === 2 ? membership.v2 : membership.v1.get(mount.controllers.find((each) => each === 'pids' || each === 'memory') ?? '');
      const folder = where === undefined ? undefined : cgroupFolder(mount, where);
      if (folder === undefined || !fs.existsSync(folder)) continue;
      left.push(...fs.readdirSync(folder).filter((name) => new RegExp(`^candor-gate-\\d+-${process.pid}-\\d+$`).test(name)));
    }
    return left;
  };

  it('a fork bomb (300 sleepers) starts all of them without limits, and is stopped by the cgroup at 64, named as the process limit', async () => {
    const free = needle();
    const trap = await run(forkBomb(free));
    assert.equal(trap.passed, true, trap.tail);
    assert.match(trap.tail, /spawned 300/, 'the trap: without limits all 300 start');
    assert.equal(trap.limits, undefined, 'no limits asked, none reported');
    assert.ok(await gone(free), 'the sleepers went with the process group');

    const capped = needle();
    const result = await run(forkBomb(capped), { limits: limitsFor() });
    assert.equal(result.passed, false);
    assert.doesNotMatch(result.tail, /spawned/);
    assert.equal(result.limitHit, 'hit the process limit (64)');
    assert.equal(result.limits?.pids, 'cgroup');
    assert.ok(await gone(capped), 'everything in the cgroup was killed');
    assert.deepEqual(leftCgroups(), [], 'the cgroup was removed');
  });

  it('without a cgroup, the same bomb under the gate uid is stopped by RLIMIT_NPROC, said as a "may" from the fork failures', async () => {
    const free = needle();
    const trap = await run(forkBomb(free), { uid: GATE_UID });
    assert.match(trap.tail, /spawned 300/, 'the trap: the gate uid alone does not bound it');
    assert.ok(await gone(free));

    const capped = needle();
    const result = await run(forkBomb(capped), { uid: GATE_UID, limits: limitsFor(), cgroups: false });
    assert.equal(result.passed, false);
    assert.doesNotMatch(result.tail, /spawned/);
    assert.equal(result.limitHit, 'may have hit the process limit (64)');
    assert.equal(result.limits?.pids, 'rlimit');
    assert.equal(result.limits?.memory, 'none', 'no cgroup, and 256 MiB is too low for RLIMIT_AS');
    assert.ok(await gone(capped));
  });

  it('a memory bomb (1 GiB of touched buffers) completes without limits, and is OOM-killed at 256 MiB, named as the memory limit', async () => {
    const bomb = `"${process.execPath}" -e 'const kept = []; for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(16 << 20, 1)); console.log("allocated", kept.length * 16, "MiB")'`;
    const trap = await run(bomb);
    assert.match(trap.tail, /allocated 1024 MiB/, 'the trap: without limits it gets its 1 GiB');

    const result = await run(bomb, { limits: limitsFor() });
    assert.equal(result.passed, false);
    assert.doesNotMatch(result.tail, /allocated/);
    assert.equal(result.limitHit, 'hit the memory limit (256 MiB)');
    assert.equal(result.limits?.memory, 'cgroup');
    assert.deepEqual(leftCgroups(), []);
  });

  it('one 100 MiB file is cut at the file size limit (SIGXFSZ), and node\'s EFBIG is reported as a "may"', async () => {
    const trap = await run('dd if=/dev/zero of=big bs=1M count=100 2>&1');
    assert.equal(trap.passed, true, trap.tail);
    assert.equal(fs.statSync(path.join(dir, 'big')).size, 100 * MiB, 'the trap: without limits the whole file is written');
    fs.rmSync(path.join(dir, 'big'));

    const result = await run('dd if=/dev/zero of=big bs=1M count=100 2>&1', { limits: limitsFor({ fileSizeMiB: 16 }) });
    assert.equal(result.passed, false);
    assert.equal(result.limitHit, 'hit the file size limit (16 MiB)');
    assert.equal(result.limits?.fileSize, 'rlimit');
    assert.equal(fs.statSync(path.join(dir, 'big')).size, 16 * MiB);

    const fromNode = await run(`"${process.execPath}" -e 'require("fs").writeFileSync("node.bin", Buffer.alloc(32 << 20))'`, { limits: limitsFor({ fileSizeMiB: 16 }) });
    assert.equal(fromNode.passed, false);
    assert.match(fromNode.tail, /EFBIG/, 'node ignores SIGXFSZ and gets EFBIG');
    assert.equal(fromNode.limitHit, 'may have hit the file size limit (16 MiB)');
  });

  it('a disk fill spread over the clone and the home (10 × 20 MiB, paced) is killed once both together pass 64 MiB', async () => {
    const home = tempDir('candor-limits-home-');
    const fill = `for i in 1 2 3 4 5 6 7 8 9 10; do dd if=/dev/zero of=${dir}/a$i bs=1M count=10 2>/dev/null; dd if=/dev/zero of=${home}/b$i bs=1M count=10 2>/dev/null; sleep 0.3; done; echo filled`;
    const trap = await run(fill);
    assert.match(trap.tail, /filled/, 'the trap: without limits all 200 MiB are written');
    for (const folder of [dir, home]) for (const name of fs.readdirSync(folder)) fs.rmSync(path.join(folder, name));

    const result = await run(fill, { limits: limitsFor({ diskMiB: 64, diskPaths: [dir, home] }) });
    assert.equal(result.passed, false);
    assert.doesNotMatch(result.tail, /filled/, 'killed before the end');
    assert.match(result.limitHit ?? '', /^hit the disk limit \(64 MiB\): the clone and home held \d+ MiB$/);
    assert.equal(result.limits?.disk, 'poll');
    assert.ok(fs.readdirSync(dir).length < 10, 'the clone did not get all its files');
  });

  it('a fill faster than one poll (one 100 MiB fallocate) passes without limits, and fails with them: the disk is measured when the command ends', async () => {
    const trap = await run('fallocate -l 100M fast');
    assert.equal(trap.passed, true, 'the trap');
    fs.rmSync(path.join(dir, 'fast'));
    const result = await run('fallocate -l 100M fast', { limits: limitsFor({ diskMiB: 64 }) });
    assert.equal(result.exitCode, 0, 'the command itself succeeded');
    assert.equal(result.passed, false);
    assert.match(result.limitHit ?? '', /^hit the disk limit \(64 MiB\): the clone and home held 10\d MiB$/);
  });

  it('a process that leaves the process group (setsid) survives without limits, and is killed with the cgroup', async () => {
    // The command returns only once the escapee is in its own session, so the group kill at its end cannot catch it by luck.
    const escape = (seconds: string): string => `rm -f escaped.pid; setsid sh -c 'echo $$ > escaped.pid; exec sleep ${seconds}' > /dev/null 2>&1 < /dev/null & while [ ! -s escaped.pid ]; do sleep 0.05; done; echo started`;
    const loose = needle();
    const trap = await run(escape(loose));
    assert.match(trap.tail, /started/);
    const survivors = processesMatching(`sleep ${loose}`);
    assert.equal(survivors.length, 1, 'the trap: the group kill misses it');
    for (const pid of survivors) process.kill(pid, 'SIGKILL');

    const inside = await run('grep -E "pids|memory" /proc/self/cgroup', { limits: limitsFor() });
    const named = new RegExp(`^\\d+:(pids|memory):/.*candor-gate-\\d+-${process.pid}-\\d+$`, 'gm');
    assert.equal(inside.tail.match(named)?.length, 2, `the command sits in a gate cgroup of its own, for pids and memory: ${inside.tail}`);

    const caught = needle();
    const result = await run(escape(caught), { limits: limitsFor() });
    assert.equal(result.passed, true, result.tail);
    assert.equal(result.limitHit, undefined);
    assert.ok(await gone(caught), 'the cgroup kill got it');
  });

  it('the command runs as the gate uid with no extra groups, and reads the descriptors it is given as fd 3 and 4, with and without limits', async () => {
    const open = (): number[] =>
      ['first', 'second'].map((word) => {
        const file = path.join(dir, word);
        fs.writeFileSync(file, `from ${word}\n`);
        return fs.openSync(file, 'r');
      });
    for (const limits of [undefined, limitsFor()]) {
      const fds = open();
      try {
        const result = await run('id -u; id -G; cat <&3; cat <&4', { uid: GATE_UID, gid: GATE_UID, extraFds: fds, limits });
        assert.equal(result.passed, true, result.tail);
        assert.equal(result.tail, `${GATE_UID}\n${GATE_UID}\nfrom first\nfrom second\n`);
        if (limits !== undefined) assert.deepEqual(result.limits, { pids: 'cgroup', memory: 'cgroup', fileSize: 'rlimit', disk: 'poll' });
        for (const fd of fds) assert.ok(fs.fstatSync(fd).isFile(), 'the caller still owns its descriptors');
      } finally {
        for (const fd of fds) fs.closeSync(fd);
      }
    }
  });

  it('RLIMIT_AS is set only above 8 GiB of memory, and node still starts under it', async () => {
    const low = await run('grep "Max address space" /proc/self/limits', { limits: limitsFor({ memoryMiB: 4096 }), cgroups: false });
    assert.match(low.tail, /Max address space\s+unlimited/);
    assert.equal(low.limits?.memory, 'none');
    const high = await run(`grep "Max address space" /proc/self/limits; "${process.execPath}" -e 'console.log("node ok")'`, { limits: limitsFor({ memoryMiB: 9000 }), cgroups: false });
    assert.match(high.tail, new RegExp(`Max address space\\s+${9000 * MiB}\\s+${9000 * MiB}`));
    assert.match(high.tail, /node ok/);
    assert.equal(high.limits?.memory, 'rlimit');
  });

  describe('in bubblewrap', () => {
    let sandbox: Sandbox;
    before(async function () {
      await skipUnlessSandbox(this);
      sandbox = await requiredSandbox();
    });
    const boxed = async (command: string, options: Partial<CommandOptions> = {}): Promise<CommandResult> => {
      const home = tempDir('candor-limits-home-');
      const tmp = tempDir('candor-limits-tmp-');
      for (const folder of [home, tmp]) fs.chmodSync(folder, 0o777);
      const invocation = sandbox.wrap(command, { cwd: dir, home, tmp, network: false, depsWritable: false });
      const inputs = openInputs(invocation.inputs, tmp);
      try {
        return await runInvocation(invocation, {
          cwd: dir,
          env: { PATH: process.env.PATH, HOME: home, LC_ALL: 'C' },
          timeoutMs: 60_000,
          extraFds: inputs.fds,
          invocationUid: sandbox.user?.uid,
          limits: limitsFor({ diskPaths: [dir, home] }),
          ...options,
        });
      } finally {
        inputs.close();
      }
    };

    it('the fork bomb and the memory bomb are stopped inside the sandbox too, by the cgroup the command joined', async () => {
      const free = await boxed(forkBomb(needle()), { limits: undefined });
      assert.match(free.tail, /spawned 300/, 'the trap: the sandbox alone does not bound it');
      const forks = await boxed(forkBomb(needle()));
      assert.equal(forks.limitHit, 'hit the process limit (64)', forks.tail);
      const memory = await boxed(`"${process.execPath}" -e 'const kept = []; for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(16 << 20, 1)); console.log("allocated")'`);
      assert.equal(memory.limitHit, 'hit the memory limit (256 MiB)', memory.tail);
      assert.deepEqual(leftCgroups(), []);
    });

    it("the command's own shell joins the gate cgroup before the command runs, and leaves it no descriptor of the cgroup", async () => {
      // What the command sees: its cgroups, and every descriptor it holds (a `tasks` file open for writing would let it move processes).
      const result = await boxed('grep -E "pids|memory" /proc/self/cgroup; ls -l /proc/self/fd/');
      assert.equal(result.passed, true, result.tail);
      const named = new RegExp(`^\\d+:(pids|memory):/.*candor-gate-\\d+-${process.pid}-\\d+$`, 'gm');
      assert.equal(result.tail.match(named)?.length, 2, `in the gate cgroup, for pids and memory: ${result.tail}`);
      assert.doesNotMatch(result.tail, /tasks|cgroup\.procs|\/sys\/fs\/cgroup/, 'no descriptor of the cgroup is left to the command');
      assert.deepEqual(leftCgroups(), []);
    });

    it('without a cgroup, RLIMIT_NPROC set before bubblewrap bounds the gate user it switches to', async function () {
      skipUnless(this, sandbox.user === undefined ? 'the sandbox switches to no gate user here (Candor is not root)' : undefined);
      const forks = await boxed(forkBomb(needle()), { cgroups: false });
      assert.equal(forks.limits?.pids, 'rlimit');
      assert.equal(forks.limitHit, 'may have hit the process limit (64)', forks.tail);
    });
  });
});

describe('gate limits, decided from plain inputs', () => {
  it('finds the cgroup folders of a v1 host with a nested memory cgroup, and of a v2 container whose namespace root is its own', () => {
    const mounts = parseCgroupMounts([
      '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
      '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
      '41 31 0:38 /docker/abc /sys/fs/cgroup/unified\\040x rw,relatime - cgroup2 cgroup2 rw',
    ].join('\n'));
    const membership = parseMembership('8:pids:/\n4:memory:/process_api/abc\n0::/docker/abc/leaf\n');
    assert.deepEqual(mounts.map((mount) => [mount.version, mount.mountPoint]), [[1, '/sys/fs/cgroup/memory'], [1, '/sys/fs/cgroup/pids'], [2, '/sys/fs/cgroup/unified x']]);
    const [memory, pids, unified] = mounts;
    assert.equal(cgroupFolder(memory!, membership.v1.get('memory')!), '/sys/fs/cgroup/memory/process_api/abc');
    assert.equal(cgroupFolder(pids!, membership.v1.get('pids')!), '/sys/fs/cgroup/pids');
    assert.equal(cgroupFolder(unified!, membership.v2!), '/sys/fs/cgroup/unified x/leaf');
    assert.equal(cgroupFolder(unified!, '/elsewhere'), undefined, 'a cgroup the mount does not show');
  });

  it('without prlimit nothing but the disk is limited, and the invocation is the command itself', () => {
    const prepared = prepareLimits({ file: '/bin/sh', args: ['-c', 'true'] }, { limits: { processes: 64, memoryMiB: 256, fileSizeMiB: 16, diskMiB: 64, diskPaths: ['/tmp'] }, cgroups: false, tools: {} });
    assert.deepEqual(prepared.mechanisms, { pids: 'none', memory: 'none', fileSize: 'none', disk: 'poll' });
    assert.deepEqual(prepared.invocation, { file: '/bin/sh', args: ['-c', 'true'] });
  });

  it("a v1 cgroup on a 5.16 kernel is joined by the command's own shell through descriptors opened for it; otherwise by a fixed step first", () => {
    const folder = tempDir('candor-join-');
    const tasks = ['pids', 'memory'].map((name) => {
      fs.mkdirSync(path.join(folder, name));
      fs.writeFileSync(path.join(folder, name, 'tasks'), '');
      return path.join(folder, name, 'tasks');
    });
    const cgroupOf = (joinFiles: string[]): GateCgroup => ({ controllers: { pids: 1, memory: 1 }, joinFiles, report: () => ({ pidsRefused: 0, oomKills: 0 }), members: () => [], killAll: () => undefined, drain: async () => true, close: async () => undefined, removeNow: () => true });
    const limits: GateLimits = { processes: 64, memoryMiB: 256, fileSizeMiB: 16, diskMiB: 64, diskPaths: [] };
    const tools = { prlimit: '/usr/bin/prlimit', setpriv: '/usr/bin/setpriv' };
    const shell = { file: '/bin/sh', args: ['-c', 'make test'], script: 1 };
    const prepare = (kernel: string, joinFiles = tasks, invocation: Invocation = shell) => prepareLimits(invocation, { limits, cgroup: cgroupOf(joinFiles), tools, kernel, fdsBefore: 2 });

    const inScript = prepare('6.1.0-27-amd64');
    try {
      assert.equal(inScript.invocation.file, '/usr/bin/prlimit', 'no process is added to join');
      assert.equal(inScript.invocation.args.at(-1), 'echo 0 >&5 || exit 125; exec 5>&-; echo 0 >&6 || exit 125; exec 6>&-\nmake test', 'fds 5 and 6: after stdio and the caller\'s two');
      assert.equal(inScript.invocation.script, inScript.invocation.args.length - 1);
      assert.equal(inScript.fds?.length, 2);
      inScript.fds?.forEach((fd) => fs.writeSync(fd, '0\n'));
      assert.deepEqual(tasks.map((file) => fs.readFileSync(file, 'utf8')), ['0\n', '0\n'], 'each descriptor writes into its own tasks file');
    } finally {
      inScript.fds?.forEach((fd) => fs.closeSync(fd));
    }
    const fixed = (prepared: PreparedLimits): void => {
      assert.equal(prepared.invocation.file, '/bin/sh');
      assert.match(prepared.invocation.args[1] ?? '', /^n=\$1; /, 'the fixed join step');
      assert.equal(prepared.invocation.args.at(-1), 'make test', 'the script itself unchanged');
      assert.equal(prepared.fds, undefined);
    };
    fixed(prepare('5.15.0-91-generic'));
    fixed(prepare('4.18.0-513.el8.x86_64'));
    fixed(prepare('6.1.0', [path.join(folder, 'cgroup.procs')]));
    fixed(prepare('6.1.0', tasks, { file: '/usr/bin/sandbox-exec', args: ['-p', '(version 1)', '/bin/sh', '-c', 'make test'] }));
    assert.deepEqual(['5.16.0', '5.15.200', '6.0', '10.1', 'x'].map(opensWithOpenerCredentials), [true, false, true, true, false]);
  });

  it('fork failures in the output of a command that succeeded name no limit; a chunk boundary does not hide one', () => {
    const limits: GateLimits = { processes: 64, memoryMiB: 256, fileSizeMiB: 16, diskMiB: 64, diskPaths: [] };
    const mechanisms = { pids: 'rlimit', memory: 'none', fileSize: 'rlimit', disk: 'none' } as const;
    const signs = new OutputSigns();
    signs.push('bash: fork: Resource tempor');
    signs.push('arily unavailable\n');
    const evidence = { pidsRefused: 0, oomKills: 0, signal: null, signs };
    assert.equal(limitReason(limits, mechanisms, { ...evidence, exitCode: 0 }), undefined);
    assert.equal(limitReason(limits, mechanisms, { ...evidence, exitCode: 254 }), 'may have hit the process limit (64)');
    assert.equal(limitReason(limits, { ...mechanisms, pids: 'none' }, { ...evidence, exitCode: 254 }), undefined, 'no process limit, no claim');
  });
});

