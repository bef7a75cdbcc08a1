import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGate, type GateOptions } from '../../../../src/core/evolution/testGate';
import { NO_SANDBOX, detectSandbox, isSandboxUnavailable, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { bubblewrapInvocation } from '../../../../src/core/sandbox/bubblewrap';
import { removeTempDirs, requiredSandbox, tempDir, write, skipUnlessSandbox } from '../evolution/helpers';
import { gateRun, runWrapped } from './sandboxHelpers';
import { notRoot, skipUnless } from '../../../helpers/preconditions';

/**
 * The sandbox on its own (docs/architecture.md, "Sandbox"). Each defence is
 * shown twice: the trap working without it, then the sandbox holding. These
 * run as whatever user runs the tests; as root they are the ones that matter.
 */
describe('sandbox: bubblewrap around every gate command', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let sandbox: Sandbox;
  let clone: string;
  const bwrap = (): string => (spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim() || assert.fail('bwrap is not installed: apt-get install bubblewrap'));
  const setpriv = (): string => spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).stdout.trim() || assert.fail('setpriv is not installed: apt-get install util-linux');

  before(async () => {
    sandbox = await requiredSandbox();
  });
  beforeEach(() => {
    clone = path.join(tempDir('candor-data-'), 'scratch', 'repo');
    write(clone, '.git/HEAD', 'ref: refs/heads/main\n');
    write(clone, 'file.txt', 'tracked\n');
  });
  afterEach(() => removeTempDirs());

  const gate = async (command: string, options: Partial<GateOptions> = {}): Promise<string> => {
    const result = await runGate([{ name: 'test', command }], { cwd: clone, sandbox, timeoutMs: 20_000, ...options });
    return result.tail;
  };

  describe('detection', () => {
    it('"required" on Linux is bubblewrap, probed once; "off" is a plain shell', async () => {
      assert.equal(sandbox.kind, 'bubblewrap');
      assert.equal((await detectSandbox('off')).kind, 'off');
    });

    it('bubblewrap missing: unavailable, naming the package to install and the setting that turns it off', async () => {
      const missing = await detectSandbox('required', { bwrapPath: path.join(tempDir('candor-nobwrap-'), 'bwrap') });
      assert.ok(isSandboxUnavailable(missing));
      assert.equal(missing.cause, 'missing');
      assert.match(missing.message, /apt-get install bubblewrap/);
      assert.match(missing.message, /candor\.evolution\.sandbox to "off"/);
      assert.match(missing.message, /at your own risk/);
    });

    it('namespaces refused (bwrap starts but cannot build the sandbox): unavailable, with what bwrap said', async () => {
      const fake = path.join(tempDir('candor-fakebwrap-'), 'bwrap');
      fs.writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', { mode: 0o755 });
      const refused = await detectSandbox('required', { bwrapPath: fake });
      assert.ok(isSandboxUnavailable(refused));
      assert.equal(refused.cause, 'refused');
      assert.match(refused.message, /No permissions to create new namespace/);
      assert.match(refused.message, /candor\.evolution\.sandbox/);
    });

    it('a bubblewrap without --size (before 0.5) still sandboxes, with its tmpfs folders unbounded rather than refused', async () => {
      const old = path.join(tempDir('candor-oldbwrap-'), 'bwrap');
      fs.writeFileSync(old, `#!/bin/sh\nfor a in "$@"; do [ "$a" = --size ] && { echo "bwrap: Unknown option --size" >&2; exit 1; }; done\nexec ${JSON.stringify(bwrap())} "$@"\n`, { mode: 0o755 });
      const detected = await detectSandbox('required', { bwrapPath: old });
      assert.ok(!isSandboxUnavailable(detected), isSandboxUnavailable(detected) ? detected.message : '');
      assert.equal(detected.kind, 'bubblewrap');
      const run = await gateRun(detected.user, { tmpfsMiB: 8 });
      const result = runWrapped(detected.wrap('head -c 16777216 /dev/zero > /tmp/fill && wc -c < /tmp/fill', run), { cwd: run.cwd, env: { PATH: process.env.PATH } });
      assert.deepEqual([result.status, result.stdout.trim()], [0, String(16 * 1024 * 1024)], result.stderr);
    });

    it('as root: setpriv missing is unavailable, naming util-linux', async function () {
      skipUnless(this, notRoot());
      const missing = await detectSandbox('required', { setprivPath: path.join(tempDir('candor-nosetpriv-'), 'setpriv') });
      assert.ok(isSandboxUnavailable(missing));
      assert.equal(missing.cause, 'missing');
      assert.match(missing.message, /setpriv/);
      assert.match(missing.message, /util-linux/);
    });

    it("as root: a sandboxUid an account of this machine has is refused before any command (the gate would get that account's files)", async function () {
      skipUnless(this, notRoot());
      // uid 1 is "daemon" on Debian; any account of /etc/passwd other than root does.
      const account = fs.readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':')).find((fields) => fields[2] !== undefined && fields[2] !== '0' && fields[2] !== '65534');
      assert.ok(account !== undefined, 'an account to collide with');
      const refused = await detectSandbox('required', { sandboxUid: Number(account[2]) });
      assert.ok(isSandboxUnavailable(refused));
      assert.equal(refused.cause, 'refused');
      assert.match(refused.message, new RegExp(`uid ${account[2]} .*belongs to the account "${account[0]}"`));
      assert.match(refused.message, /candor\.evolution\.sandboxUid/);
      for (const bad of [0, -5, 65534, 1.5]) assert.equal((await detectSandbox('required', { sandboxUid: bad })).kind, 'unavailable', String(bad));
    });

    it('as root: when the switch to the gate uid fails inside the sandbox, detection says refused, with the words of the failure', async function () {
      skipUnless(this, notRoot());
      // A setpriv outside every folder the sandbox shows cannot start in it.
      const fake = path.join(tempDir('candor-fakesetpriv-'), 'setpriv');
      fs.writeFileSync(fake, '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
      const refused = await detectSandbox('required', { setprivPath: fake });
      assert.ok(isSandboxUnavailable(refused));
      assert.equal(refused.cause, 'refused');
      assert.match(refused.message, /running as uid 64999 \(candor\.evolution\.sandboxUid\)/);
      assert.match(refused.message, /setpriv|No such file/);
    });

    it('Windows has no sandbox: "required" is unavailable, naming the setting', async () => {
      const windows = await detectSandbox('required', { platform: 'win32' });
      assert.ok(isSandboxUnavailable(windows));
      assert.equal(windows.cause, 'unsupported');
      assert.match(windows.message, /Windows/);
      assert.match(windows.message, /candor\.evolution\.sandbox to "off"/);
    });
  });

  it('as root, without --cap-drop ALL a read-only bind is remounted read-write (the trap); with the sandbox, neither / nor .git can be', async () => {
    // The trap needs root's capabilities; the defence is checked as any user.
    if (process.getuid?.() === 0) showRemountTrap(bwrap());
    const marker = `/etc/candor-sandbox-${process.pid}`;
    try {
      const tail = await gate(`mount -o remount,bind,rw / && echo REMOUNTED; mount -o remount,bind,rw .git && echo GIT-REMOUNTED; echo x > ${marker} && echo ETC-WRITTEN; echo x > .git/x && echo GIT-WRITTEN; echo done`);
      assert.match(tail, /done/);
      assert.doesNotMatch(tail, /REMOUNTED|ETC-WRITTEN|GIT-WRITTEN/);
      assert.equal(fs.existsSync(marker), false);
      assert.equal(fs.existsSync(path.join(clone, '.git', 'x')), false);
    } finally {
      // Should the defence ever fail, the host keeps no trace of this test.
      fs.rmSync(marker, { force: true });
    }
  });

  it("hides the real home (a marker file there) and Candor's data folder; writes to the home's absolute path do not land", async () => {
    const home = os.homedir();
    const marker = path.join(home, `.candor-sandbox-marker-${process.pid}`);
    const written = path.join(home, `candor-sandbox-written-${process.pid}`);
    const dataDir = path.dirname(path.dirname(clone));
    write(dataDir, 'evolution.jsonl', 'DATA-SECRET\n');
    fs.writeFileSync(marker, 'HOME-SECRET\n');
    try {
      const script = `cat ${marker}; cat ${path.join(dataDir, 'evolution.jsonl')}; echo x > ${written}; echo end`;
      const trap = await gate(script, { sandbox: NO_SANDBOX });
      assert.match(trap, /HOME-SECRET/);
      assert.match(trap, /DATA-SECRET/);
      assert.ok(fs.existsSync(written), 'the trap works without the sandbox');
      fs.rmSync(written);

      const tail = await gate(script, { hidden: [dataDir] });
      assert.match(tail, /end/);
      assert.doesNotMatch(tail, /HOME-SECRET|DATA-SECRET/);
      assert.equal(fs.existsSync(written), false);
    } finally {
      fs.rmSync(marker, { force: true });
      fs.rmSync(written, { force: true });
    }
  });

  it('binds toolchains under the home back read-only; nothing else of the home is there', async () => {
    const home = tempDir('candor-fakehome-');
    write(home, '.nvm/versions/node/bin/tool', '#!/bin/sh\necho TOOL-RAN\n');
    fs.chmodSync(path.join(home, '.nvm/versions/node/bin/tool'), 0o755);
    write(home, '.ssh/id_rsa', 'PRIVATE-KEY\n');
    // A PATH entry under the home that holds a data folder is not bound back: the data folder stays hidden.
    write(home, 'editor/data/evolution.jsonl', 'DATA-SECRET\n');
    const script = `${home}/.nvm/versions/node/bin/tool; cat ${home}/.ssh/id_rsa ${home}/editor/data/evolution.jsonl; echo x > ${home}/.nvm/new && echo TOOLCHAIN-WRITTEN; echo "HOME-HOLDS: $(ls -A ${home} | tr '\\n' ' ')"; echo end`;
    const trap = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    assert.match(trap.stdout, /PRIVATE-KEY[\s\S]*DATA-SECRET[\s\S]*TOOLCHAIN-WRITTEN/, 'the trap: a plain shell reads and writes all of it');
    fs.rmSync(path.join(home, '.nvm/new'));

    const user = sandbox.user;
    const run = await gateRun(user, { hidden: [path.join(home, 'editor/data')] });
    const invocation = bubblewrapInvocation(bwrap(), script, run, { home, env: { PATH: `/usr/bin:/bin:${path.join(home, 'editor')}` }, userSwitch: user !== undefined ? { user, setpriv: setpriv() } : undefined });
    const result = runWrapped(invocation, { cwd: run.cwd });
    assert.match(result.stdout, /TOOL-RAN/, result.stderr);
    assert.doesNotMatch(result.stdout, /PRIVATE-KEY|DATA-SECRET|TOOLCHAIN-WRITTEN/);
    assert.match(result.stdout, /HOME-HOLDS: \.nvm \n/, 'of the home, only the toolchain');
    assert.match(result.stdout, /end/);
    assert.equal(fs.existsSync(path.join(home, '.nvm/new')), false);
  });

  it('sees only its own processes, and root-owned secrets are masked', async () => {
    const tail = await gate("ls /proc | grep -c '^[0-9]'; cat /etc/shadow 2>/dev/null | wc -c; ls -A /run | wc -l");
    const [processes, shadow, run] = tail.trim().split('\n').map(Number);
    assert.ok((processes ?? 99) < 10, `saw ${processes} processes`);
    if (fs.existsSync('/etc/shadow') && process.getuid?.() === 0) assert.ok(fs.statSync('/etc/shadow').size > 0, 'the host file has bytes (the trap)');
    assert.equal(shadow, 0, '/etc/shadow gives nothing');
    assert.equal(run, 0, '/run (sockets of host services) is empty');
  });

  it('its tmpfs folders live in memory, so each is bounded: 16 MiB into /tmp, /dev/shm and a cache tmpfs land without a bound (the trap), and stop at 8 MiB with one', async () => {
    const fill = (dirs: string[]): string => dirs.map((dir) => `head -c 16777216 /dev/zero > ${dir}/fill 2>/dev/null && echo "${dir} wrote" || echo "${dir} refused $(wc -c < ${dir}/fill)"`).join('; ');
    const outcome = async (tmpfsMiB: number | undefined): Promise<string[]> => {
      const run = await gateRun(sandbox.user, { tmpfs: [] });
      const cache = path.join(run.cwd, 'cache');
      const invocation = sandbox.wrap(fill(['/tmp', '/dev/shm', cache]), { ...run, tmpfs: [cache], ...(tmpfsMiB !== undefined ? { tmpfsMiB } : {}) });
      const result = runWrapped(invocation, { cwd: run.cwd, env: { PATH: process.env.PATH } });
      assert.equal(result.status, 0, result.stderr);
      return result.stdout.trim().split('\n');
    };
    const cache = '/cache';
    assert.deepEqual((await outcome(undefined)).map((line) => line.replace(/^\S*\/cache /, `${cache} `)), ['/tmp wrote', '/dev/shm wrote', `${cache} wrote`], 'the trap: unbounded, a write of any size fills memory');
    // Refused at the bound: 8 MiB landed, not a byte more.
    assert.deepEqual((await outcome(8)).map((line) => line.replace(/^\S*\/cache /, `${cache} `)), ['/tmp', '/dev/shm', cache].map((dir) => `${dir} refused ${8 * 1024 * 1024}`));
  });

  it('no network unless asked: a loopback port the test opened is unreachable from build and test', async () => {
    const server = net.createServer((socket) => socket.on('error', () => undefined).end('HELLO\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const probe = `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',(e)=>{console.log('REFUSED '+e.code);process.exit(0)})"`;
      assert.match(await gate(probe, { sandbox: NO_SANDBOX }), /CONNECTED/, 'the trap: a plain shell connects');
      assert.match(await gate(probe, { network: true }), /CONNECTED/, 'setup on HEAD\'s lock file may connect');
      const tail = await gate(probe);
      assert.match(tail, /REFUSED/);
      assert.doesNotMatch(tail, /CONNECTED/);
    } finally {
      server.close();
    }
  });

  it('the dependency folder is writable during setup only', async () => {
    write(clone, 'node_modules/dep/index.js', 'installed\n');
    await gate('echo setup > node_modules/dep/index.js', { depsWritable: true });
    assert.equal(fs.readFileSync(path.join(clone, 'node_modules/dep/index.js'), 'utf8'), 'setup\n');
    const tail = await gate('echo test > node_modules/dep/index.js 2>/dev/null || echo REFUSED');
    assert.match(tail, /REFUSED/);
    assert.equal(fs.readFileSync(path.join(clone, 'node_modules/dep/index.js'), 'utf8'), 'setup\n');
  });

  it('what every command sees read-only (for the toolchain variables of its environment): system folders and node, not the home, /var or a hidden folder', () => {
    for (const dir of ['/usr/lib', '/etc', path.dirname(process.execPath)]) assert.equal(sandbox.isVisible(dir), true, dir);
    for (const dir of [os.homedir(), path.join(os.homedir(), '.ssh'), '/var/lib', '/srv', tempDir('candor-elsewhere-')]) assert.equal(sandbox.isVisible(dir), false, dir);
    if (fs.existsSync('/opt')) {
      assert.equal(sandbox.isVisible('/opt/candor-data'), true);
      assert.equal(sandbox.isVisible('/opt/candor-data', ['/opt/candor-data']), false, 'hidden by the run');
    }
    assert.equal(NO_SANDBOX.isVisible('/var/lib'), true, 'without a sandbox everything is');
  });
});

/** bubblewrap without `--cap-drop ALL`, as root: a read-only bind (a temp folder, standing in for `/`) is remounted and written. */
function showRemountTrap(bwrap: string): void {
  const target = tempDir('candor-ro-');
  const script = `mount -o remount,bind,rw ${target} && echo escaped > ${target}/escaped`;
  const trap = spawnSync(bwrap, ['--ro-bind', '/', '/', '--ro-bind', target, target, '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-net', 'sh', '-c', script], { encoding: 'utf8' });
  assert.equal(trap.status, 0, trap.stderr);
  assert.equal(fs.readFileSync(path.join(target, 'escaped'), 'utf8'), 'escaped\n', 'the trap works: the write reached the host');
}
