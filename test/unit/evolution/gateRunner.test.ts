import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runGate, type GateOptions } from '../../../src/core/evolution/testGate';
import { childEnv } from '../../../src/core/process/childEnv';
import { NO_SANDBOX, type Sandbox } from '../../../src/core/evolution/sandbox';
import { Tail } from '../../../src/core/evolution/tail';
import { processesMatching, removeTempDirs, requiredSandbox, running, tempDir, skipInsideEvolutionGate } from './helpers';

describe('gate runner', () => {
  before(async function () {
    await skipInsideEvolutionGate(this);
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

  it('a hang is killed at the timeout (the whole process group), reported as timed out', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    const started = Date.now();
    const result = await runGate([{ name: 'test', command: `sh -c 'sleep 60 & echo $! > ${pidFile}; wait'` }], { sandbox: NO_SANDBOX, cwd: dir, timeoutMs: 500 });
    assert.deepEqual([result.passed, result.timedOut, result.failedStep], [false, true, 'test']);
    assert.ok(Date.now() - started < 5000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    const deadline = Date.now() + 3000;
    while (running(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(running(pid), false, 'the grandchild is gone');
  });

  it('in the sandbox, a hang is killed at the timeout with everything it started (its own session and PID namespace)', async () => {
    const needle = `${60 + Math.random()}`.slice(0, 12);
    const started = Date.now();
    const result = await runGate([{ name: 'test', command: `sh -c 'sleep ${needle} & wait' & sleep ${needle}` }], boxed({ cwd: dir, timeoutMs: 500 }));
    assert.deepEqual([result.passed, result.timedOut], [false, true]);
    assert.ok(Date.now() - started < 5000);
    const deadline = Date.now() + 3000;
    while (processesMatching(`sleep ${needle}`).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
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
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runGate([{ name: 'test', command: 'sleep 30' }], boxed({ cwd: dir, timeoutMs: 60_000, signal: controller.signal }));
    assert.deepEqual([result.passed, result.cancelled], [false, true]);
    assert.ok(result.ms < 5000);
  });

  it('the tail starts at a character boundary', () => {
    const tail = new Tail(5);
    tail.push(Buffer.from('ab€€€'));
    assert.equal(tail.text(), '[… 8 earlier bytes not kept]\n€');
  });
});
