import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { changeTools } from '../../../../src/core/evolution/changeTools';
import { GateRunner, type GateRunnerOptions } from '../../../../src/core/evolution/gateRunner';
import type { ToolHost } from '../../../../src/core/chat/tools';
import { NO_SANDBOX, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { removeTempDirs, requiredSandbox, tempDir, write, skipUnlessSandbox } from './helpers';

describe('change tools: confined to the scratch clone', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let root: string;
  let outside: string;
  let tools: ToolHost;
  const signal = new AbortController().signal;
  const call = (name: string, args: Record<string, unknown>): Promise<string> => tools.run(name, JSON.stringify(args), signal);
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await requiredSandbox();
  });
  let parent: string;
  /** The tools as the pipeline makes them: run_tests through the run's one runner (GateRunner). */
  const toolsFor = (sandbox: Sandbox, command: string, extra: Partial<GateRunnerOptions> = {}): ToolHost => {
    const runner = new GateRunner({ scratch: { dataDir: parent, dir: root }, base: 'HEAD', sandbox, hidden: [], testCommand: command, timeoutMs: 10_000, print: () => undefined, onCommand: () => undefined, ...extra });
    return changeTools({ root, runTests: (signal) => runner.runTests(signal), timeoutMs: 10_000, ...(extra.secrets !== undefined ? { secrets: extra.secrets } : {}) });
  };
  beforeEach(() => {
    parent = tempDir('candor-tools-');
    // Where the pipeline keeps a clone: the runner's clean-up after a command refuses any other place.
    root = path.join(parent, 'scratch', 'clone');
    outside = path.join(parent, 'outside');
    write(root, 'src/a.js', 'one\ntwo\nthree\n');
    write(root, '.git/config', '[core]\n');
    write(outside, 'secret.txt', 'top secret\n');
    fs.symlinkSync(outside, path.join(root, 'link-out'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link.txt'));
    fs.symlinkSync(path.join(root, 'src'), path.join(root, 'link-in'));
    fs.symlinkSync(path.join(outside, 'missing.txt'), path.join(root, 'dangling.txt'));
    tools = toolsFor(sandbox, 'echo "key=${OPENAI_API_KEY:-none}"; exit 0');
  });
  afterEach(() => removeTempDirs());

  it('offers exactly the six tools', () => {
    assert.deepEqual(tools.specs().map((s) => s.function.name), ['read_file', 'list_files', 'search_text', 'write_file', 'apply_patch', 'run_tests']);
  });

  it('reads, lists and searches inside', async () => {
    assert.equal(await call('read_file', { path: 'src/a.js' }), 'one\ntwo\nthree\n');
    assert.match(await call('list_files', { path: '.' }), /^link-in@\nlink-out@\n/m);
    assert.match(await call('search_text', { query: 'two' }), /src\/a\.js:2: two/);
    assert.equal(await call('read_file', { path: 'link-in/a.js' }), 'one\ntwo\nthree\n', 'a symlink that stays inside is fine');
  });

  const escapes: Array<[string, Record<string, unknown>, RegExp]> = [
    ['read_file', { path: '../outside/secret.txt' }, /climbs out/],
    ['read_file', { path: path.join('/', 'etc', 'passwd') }, /is absolute/],
    ['read_file', { path: 'link-out/secret.txt' }, /leads outside/],
    ['read_file', { path: 'secret-link.txt' }, /leads outside/],
    ['read_file', { path: '.git/config' }, /git's own directory/],
    ['list_files', { path: '..' }, /climbs out/],
    ['list_files', { path: 'link-out' }, /leads outside/],
    ['search_text', { query: 'secret', path: 'link-out' }, /leads outside/],
    ['search_text', { query: 'secret', path: '../outside' }, /climbs out/],
    ['write_file', { path: '../outside/new.txt', content: 'x' }, /climbs out/],
    ['write_file', { path: 'src/../../outside/new.txt', content: 'x' }, /climbs out/],
    ['write_file', { path: '/tmp/candor-owned.txt', content: 'x' }, /is absolute/],
    ['write_file', { path: 'link-out/new.txt', content: 'x' }, /leads outside/],
    ['write_file', { path: 'link-out/deeper/new.txt', content: 'x' }, /leads outside/],
    ['write_file', { path: 'secret-link.txt', content: 'overwritten' }, /leads outside/],
    ['write_file', { path: 'dangling.txt', content: 'x' }, /target does not exist/],
    ['write_file', { path: '.git/hooks/pre-commit', content: 'x' }, /git's own directory/],
    ['write_file', { path: 'node_modules/dep/index.js', content: 'x' }, /only the setup command fills/],
    ['write_file', { path: 'src/../node_modules/x.js', content: 'x' }, /only the setup command fills/],
    ['apply_patch', { patch: '--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-top secret\n+changed\n' }, /climbs out/],
    ['apply_patch', { patch: '--- a/link-out/secret.txt\n+++ b/link-out/secret.txt\n@@ -1 +1 @@\n-top secret\n+changed\n' }, /leads outside/],
    ['apply_patch', { patch: '--- /dev/null\n+++ b//tmp/x.txt\n@@ -0,0 +1 @@\n+x\n' }, /is absolute/],
  ];
  for (const [name, args, refusal] of escapes) {
    it(`${name} ${JSON.stringify(args).slice(0, 70)} is refused`, async () => {
      const reply = await call(name, args);
      assert.match(reply, /^Error: /);
      assert.match(reply, refusal);
      assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'top secret\n');
      assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
    });
  }

  it('writes and creates files inside, folders included', async () => {
    assert.match(await call('write_file', { path: 'src/b/new.js', content: 'fresh\n' }), /^created src\/b\/new\.js/);
    assert.equal(fs.readFileSync(path.join(root, 'src/b/new.js'), 'utf8'), 'fresh\n');
    assert.match(await call('write_file', { path: 'link-in/a.js', content: 'via link\n' }), /^wrote src\/a\.js/);
    assert.equal(fs.readFileSync(path.join(root, 'src/a.js'), 'utf8'), 'via link\n');
  });

  it('apply_patch: patches, creates and deletes; a patch that does not fit changes nothing', async () => {
    const patch = [
      '--- a/src/a.js', '+++ b/src/a.js', '@@ -1,3 +1,3 @@', ' one', '-two', '+TWO', ' three',
      '--- /dev/null', '+++ b/src/c.js', '@@ -0,0 +1 @@', '+created',
      '',
    ].join('\n');
    assert.equal(await call('apply_patch', { patch }), 'patched src/a.js\ncreated src/c.js');
    assert.equal(fs.readFileSync(path.join(root, 'src/a.js'), 'utf8'), 'one\nTWO\nthree\n');
    assert.equal(fs.readFileSync(path.join(root, 'src/c.js'), 'utf8'), 'created\n');
    assert.equal(await call('apply_patch', { patch: '--- a/src/c.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-created\n' }), 'deleted src/c.js');
    assert.equal(fs.existsSync(path.join(root, 'src/c.js')), false);

    const halfBad = ['--- /dev/null', '+++ b/src/d.js', '@@ -0,0 +1 @@', '+d', '--- a/src/a.js', '+++ b/src/a.js', '@@ -1 +1 @@', '-not there', '+x', ''].join('\n');
    assert.match(await call('apply_patch', { patch: halfBad }), /^Error: the patch does not apply to src\/a\.js/);
    assert.equal(fs.existsSync(path.join(root, 'src/d.js')), false, 'all or nothing');
    assert.match(await call('apply_patch', { patch: 'hello' }), /^Error: the patch holds no file changes/);
  });

  it('run_tests runs the gate steps in the clone without the API key; bad arguments and unknown tools are errors, not crashes', async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-live-key';
    try {
      assert.match(await call('run_tests', {}), /^PASSED: passed in [\d.]+ s\nkey=none\n$/);
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
    const printsKey = "printf 'live-key-123456\\n'";
    assert.match(await toolsFor(sandbox, printsKey).run('run_tests', '{}', signal), /\nlive-key-123456\n$/, 'the trap: the test prints it');
    assert.match(await toolsFor(sandbox, printsKey, { secrets: ['live-key-123456'] }).run('run_tests', '{}', signal), /\n\[redacted\]\n$/, 'the tail sent back to the model is redacted');
    assert.match(await tools.run('write_file', '{not json', signal), /^Error: /);
    assert.match(await call('write_file', { path: 'x.txt' }), /^Error: content must be a string/);
    assert.match(await call('delete_everything', {}), /^Error: there is no tool "delete_everything"/);
  });

  it('run_tests runs in the sandbox: the clone is writable, its .git and node_modules are not, the folder beside it is unseen', async () => {
    write(root, 'node_modules/dep/index.js', 'installed\n');
    const script = [
      'echo made > made-by-test.txt',
      'echo planted > .git/planted 2>/dev/null && echo GIT-WRITTEN',
      'echo planted > node_modules/dep/index.js 2>/dev/null && echo DEPS-WRITTEN',
      `cat ${JSON.stringify(path.join(outside, 'secret.txt'))} 2>/dev/null || echo OUTSIDE-UNSEEN`,
    ].join('\n');
    // The trap: the same script without the sandbox writes .git and node_modules.
    const plain = toolsFor(NO_SANDBOX, script, { hidden: [parent] });
    const trap = await plain.run('run_tests', '{}', signal);
    assert.match(trap, /GIT-WRITTEN/);
    assert.match(trap, /DEPS-WRITTEN/);
    assert.match(trap, /top secret/);
    fs.rmSync(path.join(root, '.git', 'planted'));
    write(root, 'node_modules/dep/index.js', 'installed\n');

    const boxed = toolsFor(sandbox, script, { hidden: [parent] });
    const reply = await boxed.run('run_tests', '{}', signal);
    assert.match(reply, /^PASSED/);
    assert.doesNotMatch(reply, /GIT-WRITTEN|DEPS-WRITTEN|top secret/);
    assert.match(reply, /OUTSIDE-UNSEEN/);
    assert.equal(fs.readFileSync(path.join(root, 'made-by-test.txt'), 'utf8'), 'made\n');
    assert.equal(fs.existsSync(path.join(root, '.git', 'planted')), false);
    assert.equal(fs.readFileSync(path.join(root, 'node_modules/dep/index.js'), 'utf8'), 'installed\n');
  });
});
