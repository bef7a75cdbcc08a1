import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runInvocation, type CommandResult } from '../../../../src/core/sandbox/command';
import { openGateCgroup, releaseGateCgroup } from '../../../../src/core/sandbox/gateCgroups';
import { runGate, type GateOptions } from '../../../../src/core/evolution/testGate';
import { childEnv } from '../../../../src/core/process/childEnv';
import { NO_SANDBOX, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { Tail } from '../../../../src/core/sandbox/tail';
import { processesMatching, removeTempDirs, requiredSandbox, running, tempDir, skipUnlessSandbox } from './helpers';
import { eventually, gateCgroupsOf } from '../sandbox/sandboxHelpers';
import { notRoot, skipUnless } from '../../../helpers/preconditions';

describe('gate runner', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let dir: string;
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await requiredSandbox();
  });
  beforeEach(() => {
    dir = tempDir('candor-gate-');
  });
  afterEach(() => removeTempDirs());
  /** Most behaviour is the same in and out of the sandbox; these run in it. */
  const boxed = (options: Omit<GateOptions, 'sandbox'>): GateOptions => ({ sandbox, ...options });

  it('runs setup, build and test in order in the clone, streaming output; stops at the first failure', async () => {
    let streamed = '';
    const steps = [
      { name: 'setup', command: 'echo setup >> order.txt' },
      { name: 'build', command: 'echo build >> order.txt' },
      { name: 'test', command: 'echo test >> order.txt; echo from-test' },
    ] as const;
    const ok = await runGate(steps, boxed({ cwd: dir, timeoutMs: 10_000, onOutput: (c) => (streamed += c) }));
    assert.equal(ok.passed, true);
    assert.equal(fs.readFileSync(path.join(dir, 'order.txt'), 'utf8'), 'setup\nbuild\ntest\n');
    assert.match(streamed, /\$ echo build >> order\.txt\n[\s\S]*from-test/);
    const failing = await runGate([{ name: 'build', command: 'exit 3' }, { name: 'test', command: 'echo never > never.txt' }], boxed({ cwd: dir, timeoutMs: 10_000 }));
    assert.deepEqual([failing.passed, failing.exitCode, failing.failedStep], [false, 3, 'build']);
    assert.equal(fs.existsSync(path.join(dir, 'never.txt')), false);
  });

  it('the environment is the allow-list: no API key, no CANDOR_* variable, no secret, no GIT_* redirection, no unlisted variable', async () => {
    const planted: Record<string, string> = {
      OPENAI_API_KEY: 'sk-from-env-1234',
      CANDOR_TOKEN: 'candor-secret',
      SOME_TOOL_AUTH: 'sk-passed-as-secret',
      GIT_DIR: '/somewhere/else/.git',
      HARMLESS: 'not-listed',
      LISTED_BY_USER: 'kept',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((key) => [key, process.env[key]]));
    Object.assign(process.env, planted);
    try {
      const result = await runGate([{ name: 'test', command: 'env' }], boxed({ cwd: dir, timeoutMs: 10_000, secrets: ['sk-passed-as-secret'], environment: ['LISTED_BY_USER'] }));
      assert.equal(result.passed, true);
      for (const leaked of ['sk-from-env-1234', 'candor-secret', 'sk-passed-as-secret', 'GIT_DIR', 'HARMLESS']) assert.ok(!result.tail.includes(leaked), leaked);
      assert.match(result.tail, /LISTED_BY_USER=kept/, 'a name in candor.evolution.environment is passed on');
      assert.match(result.tail, /^CI=1$/m);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    assert.deepEqual(Object.keys(childEnv(['abcd'], { A: 'xabcdx', B: 'ok', openai_api_key: 'k', Candor_X: 'y' })), ['B']);
  });

  // The hangs below would run for ten minutes: a gate that waited for one fails the
  // test on the test's own time limit, far over 10x the 500 ms timeout.
  it('a hang is killed at the timeout (the whole process group), reported as timed out', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    const result = await runGate([{ name: 'test', command: `sh -c 'sleep 600 & echo $! > ${pidFile}; wait'` }], { sandbox: NO_SANDBOX, cwd: dir, timeoutMs: 500 });
    assert.deepEqual([result.passed, result.timedOut, result.failedStep], [false, true, 'test']);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    assert.ok(await eventually(() => !running(pid), 10_000), 'the grandchild is gone');
  });

  it('in the sandbox, a hang is killed at the timeout with everything it started (its own session and PID namespace)', async () => {
    const needle = `${600 + Math.random()}`.slice(0, 12);
    const result = await runGate([{ name: 'test', command: `sh -c 'sleep ${needle} & wait' & sleep ${needle}` }], boxed({ cwd: dir, timeoutMs: 500 }));
    assert.deepEqual([result.passed, result.timedOut], [false, true]);
    await eventually(() => processesMatching(`sleep ${needle}`).length === 0, 10_000);
    assert.deepEqual(processesMatching(`sleep ${needle}`), [], 'nothing of the command is left on the host');
  });

  it('in the sandbox: HOME and TMPDIR are a throwaway pair, fresh per call and gone after it', async () => {
    const first = await runGate([{ name: 'test', command: 'echo "$HOME|$TMPDIR"; touch "$HOME/h" "$TMPDIR/t" && echo WROTE' }], boxed({ cwd: dir, timeoutMs: 10_000 }));
    const second = await runGate([{ name: 'test', command: 'echo "$HOME|$TMPDIR"; ls -A "$HOME" "$TMPDIR"' }], boxed({ cwd: dir, timeoutMs: 10_000 }));
    const [home, tmp] = first.tail.split('\n')[0]?.split('|') ?? [];
    assert.match(first.tail, /WROTE/);
    assert.ok(home !== undefined && tmp !== undefined && home.includes('candor-gate-') && tmp.includes('candor-gate-'), first.tail);
    assert.notEqual(second.tail.split('\n')[0], first.tail.split('\n')[0], 'a fresh pair per call');
    assert.doesNotMatch(second.tail, /^h$|^t$/m, 'nothing carried over');
    assert.equal(fs.existsSync(path.dirname(home ?? '')), false, 'removed after the call');
  });

  it('in the sandbox, a dependency folder the build makes is read-only to the test after it in the same gate', async () => {
    const steps = [
      { name: 'build', command: 'mkdir node_modules && touch node_modules/by-build && echo BUILT' },
      { name: 'test', command: 'touch by-test && echo WROTE-CLONE; touch node_modules/by-test 2>/dev/null && echo WROTE-DEPS || echo REFUSED-DEPS' },
    ] as const;
    const result = await runGate(steps, boxed({ cwd: dir, timeoutMs: 10_000 }));
    assert.equal(result.passed, true, result.tail);
    assert.ok(fs.existsSync(path.join(dir, 'node_modules', 'by-build')), 'the trap: the build could write it, as it did not exist yet');
    assert.match(result.tail, /WROTE-CLONE/, 'the test writes the clone');
    assert.match(result.tail, /REFUSED-DEPS/, 'but not the dependency folder made a step before');
    assert.equal(fs.existsSync(path.join(dir, 'node_modules', 'by-test')), false);
  });

  it('a missing command fails with the shell’s words; megabytes of output keep a 4 KB tail', async () => {
    const missing = await runGate([{ name: 'test', command: 'candor-no-such-binary --flag' }], boxed({ cwd: dir, timeoutMs: 10_000 }));
    assert.deepEqual([missing.passed, missing.exitCode], [false, 127]);
    assert.match(missing.tail, /not found/);
    let bytes = 0;
    const loud = await runGate([{ name: 'test', command: `head -c 3000000 /dev/zero | tr '\\0' 'y'; echo; echo LAST LINE` }], boxed({ cwd: dir, timeoutMs: 20_000, onOutput: (c) => (bytes += c.length) }));
    assert.equal(loud.passed, true);
    assert.ok(bytes > 3_000_000);
    assert.ok(Buffer.byteLength(loud.tail) < 4200);
    assert.match(loud.tail, /^\[… [\d,]+ earlier bytes not kept\]\n/);
    assert.match(loud.tail, /LAST LINE\n$/);
  });

  it('cancelling stops the command', async () => {
    // Stop once the command is running (its own output, not the echoed command line);
    // it would run for ten minutes otherwise.
    const controller = new AbortController();
    const onOutput = (chunk: string): void => {
      if (chunk.includes('running 42')) controller.abort();
    };
    const result = await runGate([{ name: 'test', command: 'echo "running $((6 * 7))"; exec sleep 600' }], boxed({ cwd: dir, timeoutMs: 600_000, signal: controller.signal, onOutput }));
    assert.deepEqual([result.passed, result.cancelled], [false, true]);
  });

  it('the tail starts at a character boundary', () => {
    const tail = new Tail(5);
    tail.push(Buffer.from('ab€€€'));
    assert.equal(tail.text(), '[… 8 earlier bytes not kept]\n€');
  });
});

describe("a gate's cgroup", () => {
  const limits = { processes: 64, memoryMiB: 256, fileSizeMiB: 1024, diskMiB: 1024 };
  let dir: string;
  before(async function () {
    // Only root (and CI, which runs as root) can make cgroups here.
    skipUnless(this, notRoot());
    await skipUnlessSandbox(this);
  });
  beforeEach(() => {
    dir = tempDir('candor-gate-cgroup-');
  });
  afterEach(() => removeTempDirs());
  const needle = (): string => `${40 + Math.random()}`.slice(0, 12);
  const cgroupLines = 'grep -E "pids|memory" /proc/self/cgroup';
  /** Leaves a sleeper in a session of its own, which the group kill at the command's end cannot reach. */
  const escape = (seconds: string): string => `rm -f escaped.pid; setsid sh -c 'echo $$ > escaped.pid; exec sleep ${seconds}' > /dev/null 2>&1 < /dev/null & while [ ! -s escaped.pid ]; do sleep 0.05; done; ${cgroupLines} > build.cgroup`;
  /** ALIVE while the escaped sleeper runs (a zombie counts as gone). */
  const check = `${cgroupLines} > test.cgroup; case "$(sed -n 's/^State:[[:space:]]*//p' "/proc/$(cat escaped.pid)/status" 2>/dev/null)" in ""|Z*) echo GONE;; *) echo ALIVE;; esac`;

  it('is one for every command of the gate, emptied between them, and gone after the gate without anyone waiting for it', async () => {
    const loose = needle();
    const steps = (seconds: string) => [{ name: 'build', command: escape(seconds) }, { name: 'test', command: check }] as const;
    const trap = await runGate(steps(loose), { sandbox: NO_SANDBOX, cwd: dir, timeoutMs: 20_000 });
    assert.match(trap.tail, /ALIVE/, `the trap: without limits the build's escapee is still running when the test starts: ${trap.tail}`);
    for (const pid of processesMatching(`sleep ${loose}`)) process.kill(pid, 'SIGKILL');

    const caught = needle();
    const result = await runGate(steps(caught), { sandbox: NO_SANDBOX, cwd: dir, timeoutMs: 20_000, limits });
    assert.equal(result.passed, true, result.tail);
    assert.match(result.tail, /GONE/, "the build's escapee was killed before the test started");
    const build = fs.readFileSync(path.join(dir, 'build.cgroup'), 'utf8');
    assert.equal(build.match(new RegExp(`^\\d+:(pids|memory):/.*candor-gate-\\d+-${process.pid}-\\d+$`, 'gm'))?.length, 2, `the build ran in a gate cgroup, for pids and memory: ${build}`);
    assert.equal(fs.readFileSync(path.join(dir, 'test.cgroup'), 'utf8'), build, 'the test ran in the same one');
    assert.ok(await eventually(() => gateCgroupsOf(process.pid).length === 0), `the gate's cgroup is removed after the gate: ${gateCgroupsOf(process.pid).join(', ')}`);
    assert.deepEqual(processesMatching(`sleep ${caught}`), []);
  });

  it('a command after one that hit the process limit in the same cgroup passes: each counts from its own start', async () => {
    const cgroup = openGateCgroup(limits);
    assert.ok(cgroup !== undefined, 'a cgroup can be made here');
    const command = (script: string): Promise<CommandResult> =>
      runInvocation(NO_SANDBOX.wrap(script, { cwd: dir, home: dir, tmp: dir, network: false, depsWritable: false }), {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir, LC_ALL: 'C' },
        timeoutMs: 60_000,
        limits: { ...limits, diskPaths: [dir] },
        cgroup,
      });
    try {
      const bomb = await command(`i=0; while [ $i -lt 300 ]; do sleep ${needle()} & i=$((i + 1)); done; echo spawned $i`);
      assert.equal(bomb.limitHit, 'hit the process limit (64)', bomb.tail);
      const next = await command('echo after');
      assert.deepEqual([next.passed, next.limitHit, next.tail], [true, undefined, 'after\n']);
    } finally {
      releaseGateCgroup(cgroup);
    }
  });

  it('a cgroup left by a Candor killed during its gate, and what still ran in it, are gone at the next gate', async () => {
    const seconds = needle();
    const module = (name: string): string => JSON.stringify(path.join(__dirname, '../../../../src/core', name));
    // The seconds come through the environment, so that only the gate's command has them on its command line.
    const script = `require(${module('evolution/testGate')}).runGate([{ name: 'test', command: 'exec sleep ' + process.env.SLEEP_FOR }], { sandbox: require(${module('sandbox/sandbox')}).NO_SANDBOX, cwd: ${JSON.stringify(dir)}, timeoutMs: 60000, limits: ${JSON.stringify(limits)} });`;
    // Its temp folder is the test's: the throwaway home a killed host leaves goes with it.
    const env = { ...process.env, SLEEP_FOR: seconds, TMPDIR: tempDir('candor-killed-host-') };
    const host = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', script], { stdio: 'ignore', env });
    const ended = new Promise((resolve) => host.once('exit', resolve));
    try {
      assert.ok(await eventually(() => processesMatching(`sleep ${seconds}`).length === 1, 30_000), "the other host's gate started");
    } finally {
      host.kill('SIGKILL');
    }
    await ended;
    const strays = gateCgroupsOf(host.pid ?? -1);
    assert.equal(strays.length, 2, 'the trap: its cgroups (pids and memory) outlive the killed host');
    assert.equal(processesMatching(`sleep ${seconds}`).length, 1, "the trap: and so does its gate's command");

    const next = await runGate([{ name: 'test', command: 'true' }], { sandbox: NO_SANDBOX, cwd: dir, timeoutMs: 10_000, limits });
    assert.equal(next.passed, true, next.tail);
    assert.ok(await eventually(() => strays.every((folder) => !fs.existsSync(folder))), 'the stray cgroups are removed from the gate start on');
    assert.ok(await eventually(() => processesMatching(`sleep ${seconds}`).length === 0), 'and what ran in them is killed');
  });

  it('in the sandbox, a fork bomb in the second command is stopped by the gate cgroup, which is gone after the gate', async () => {
    const sandbox = await requiredSandbox();
    const result = await runGate(
      [{ name: 'build', command: 'true' }, { name: 'test', command: `i=0; while [ $i -lt 300 ]; do sleep ${needle()} & i=$((i + 1)); done; echo spawned $i` }],
      { sandbox, cwd: dir, timeoutMs: 60_000, limits },
    );
    assert.deepEqual([result.passed, result.failedStep, result.limitHit, result.limits?.pids], [false, 'test', 'hit the process limit (64)', 'cgroup'], result.tail);
    assert.ok(await eventually(() => gateCgroupsOf(process.pid).length === 0), gateCgroupsOf(process.pid).join(', '));
  });
});
