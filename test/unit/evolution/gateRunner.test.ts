import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runGate } from '../../../src/core/evolution/gateRunner';
import { childEnv } from '../../../src/core/evolution/childEnv';
import { Tail } from '../../../src/core/evolution/tail';
import { removeTempDirs, running, tempDir } from './helpers';

describe('gate runner', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('candor-gate-');
  });
  afterEach(() => removeTempDirs());

  it('runs setup, build and test in order in the clone, streaming output; stops at the first failure', async () => {
    let streamed = '';
    const steps = [
      { name: 'setup', command: 'echo setup >> order.txt' },
      { name: 'build', command: 'echo build >> order.txt' },
      { name: 'test', command: 'echo test >> order.txt; echo from-test' },
    ] as const;
    const ok = await runGate(steps, { cwd: dir, timeoutMs: 10_000, onOutput: (c) => (streamed += c) });
    assert.equal(ok.passed, true);
    assert.equal(fs.readFileSync(path.join(dir, 'order.txt'), 'utf8'), 'setup\nbuild\ntest\n');
    assert.match(streamed, /\$ echo build >> order\.txt\n[\s\S]*from-test/);
    const failing = await runGate([{ name: 'build', command: 'exit 3' }, { name: 'test', command: 'echo never > never.txt' }], { cwd: dir, timeoutMs: 10_000 });
    assert.deepEqual([failing.passed, failing.exitCode, failing.failedStep], [false, 3, 'build']);
    assert.equal(fs.existsSync(path.join(dir, 'never.txt')), false);
  });

  it('the environment holds no API key, no CANDOR_* variable, no secret and no GIT_* redirection', async () => {
    const planted: Record<string, string> = {
      OPENAI_API_KEY: 'sk-from-env-1234',
      CANDOR_TOKEN: 'candor-secret',
      SOME_TOOL_AUTH: 'sk-passed-as-secret',
      GIT_DIR: '/somewhere/else/.git',
      HARMLESS: 'kept',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((key) => [key, process.env[key]]));
    Object.assign(process.env, planted);
    try {
      const result = await runGate([{ name: 'test', command: 'env' }], { cwd: dir, timeoutMs: 10_000, secrets: ['sk-passed-as-secret'] });
      assert.equal(result.passed, true);
      for (const leaked of ['sk-from-env-1234', 'candor-secret', 'sk-passed-as-secret', 'GIT_DIR']) assert.ok(!result.tail.includes(leaked), leaked);
      assert.match(result.tail, /HARMLESS=kept/);
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
    const result = await runGate([{ name: 'test', command: `sh -c 'sleep 60 & echo $! > ${pidFile}; wait'` }], { cwd: dir, timeoutMs: 500 });
    assert.deepEqual([result.passed, result.timedOut, result.failedStep], [false, true, 'test']);
    assert.ok(Date.now() - started < 5000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    const deadline = Date.now() + 3000;
    while (running(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(running(pid), false, 'the grandchild is gone');
  });

  it('a missing command fails with the shell’s words; megabytes of output keep a 4 KB tail', async () => {
    const missing = await runGate([{ name: 'test', command: 'candor-no-such-binary --flag' }], { cwd: dir, timeoutMs: 10_000 });
    assert.deepEqual([missing.passed, missing.exitCode], [false, 127]);
    assert.match(missing.tail, /not found/);
    let bytes = 0;
    const loud = await runGate([{ name: 'test', command: `head -c 3000000 /dev/zero | tr '\\0' 'y'; echo; echo LAST LINE` }], { cwd: dir, timeoutMs: 20_000, onOutput: (c) => (bytes += c.length) });
    assert.equal(loud.passed, true);
    assert.ok(bytes > 3_000_000);
    assert.ok(Buffer.byteLength(loud.tail) < 4200);
    assert.match(loud.tail, /^\[… [\d,]+ earlier bytes not kept\]\n/);
    assert.match(loud.tail, /LAST LINE\n$/);
  });

  it('cancelling stops the command', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runGate([{ name: 'test', command: 'sleep 30' }], { cwd: dir, timeoutMs: 60_000, signal: controller.signal });
    assert.deepEqual([result.passed, result.cancelled], [false, true]);
    assert.ok(result.ms < 5000);
  });

  it('the tail starts at a character boundary', () => {
    const tail = new Tail(5);
    tail.push(Buffer.from('ab€€€'));
    assert.equal(tail.text(), '[… 8 earlier bytes not kept]\n€');
  });
});
