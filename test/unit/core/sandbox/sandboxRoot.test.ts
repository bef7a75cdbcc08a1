import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGate, type GateOptions } from '../../../../src/core/evolution/testGate';
import { NO_SANDBOX, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { bubblewrapInvocation } from '../../../../src/core/sandbox/bubblewrap';
import { CALLS, gateSeccompProgram, seccompArch } from '../../../../src/core/sandbox/seccomp';
import { gateGroup, gateNsswitch, gatePasswd, gateUserFor, gateUserProblem, prepareForGateUser } from '../../../../src/core/sandbox/gateUser';
import { removeTempDirs, requiredSandbox, tempDir, write, skipUnlessSandbox } from '../evolution/helpers';
import { gateRun, openForWriting, runWrapped } from './sandboxHelpers';
import { cannotChown, notRoot, skipUnless } from '../../../helpers/preconditions';

/**
 * The sandbox when Candor runs as root (dev containers, code-server images,
 * CI): each trap is first shown armed in a plain host shell, then shown to
 * fail in the sandbox, where the commands run as the gate user with the
 * seccomp filter, and host-global kernel state is read-only or masked. A
 * kernel-state trap only opens the file for writing; nothing here writes a
 * sysctl.
 */
describe('sandbox as root: the gate user, the seccomp filter, kernel state, and what is not mounted', function () {
  this.timeout(60_000);
  before(async function () {
    await skipUnlessSandbox(this);
    skipUnless(this, notRoot());
  });
  let sandbox: Sandbox;
  let clone: string;
  const arch = seccompArch() ?? assert.fail(`no seccomp table for ${process.arch}`);
  before(async () => {
    sandbox = await requiredSandbox();
  });
  beforeEach(() => {
    clone = path.join(tempDir('candor-data-'), 'scratch', 'repo');
    write(clone, '.git/HEAD', 'ref: refs/heads/main\n');
  });
  afterEach(() => removeTempDirs());

  const gate = async (command: string, options: Partial<GateOptions> = {}): Promise<string> => (await runGate([{ name: 'test', command }], { cwd: clone, sandbox, timeoutMs: 30_000, ...options })).tail;
  const host = (command: string): Promise<string> => gate(command, { sandbox: NO_SANDBOX });

  it('runs as the gate user: id, whoami and getent name it; HOME is its throwaway home; the host shell is root', async () => {
    assert.match(await host('id -u'), /^0\n/, 'the host runs these tests as root');
    const tail = await gate('id -u; id -g; id -un; whoami; getent passwd candor-gate | cut -d: -f1,3,6; echo "home=$HOME"; touch file-of-the-gate && stat -c %u file-of-the-gate');
    const [uid, gid, name, who, entry, home, owner] = tail.trim().split('\n');
    assert.deepEqual([uid, gid, name, who, owner], ['64999', '64999', 'candor-gate', 'candor-gate', '64999']);
    assert.equal(entry, `candor-gate:64999:${home?.slice('home='.length)}`, 'its passwd entry names the throwaway home');
    assert.match(home ?? '', /^home=.*candor-gate-/);
    assert.equal(fs.statSync(path.join(clone, 'file-of-the-gate')).uid, 64999, 'and its files are its own on the host too');
  });

  it("users and groups come from the sandbox's own files alone; the host's other NSS lines stay", async function () {
    skipUnless(this, fs.existsSync('/etc/nsswitch.conf') ? undefined : 'this machine has no /etc/nsswitch.conf');
    const hostHosts = /^hosts:.*$/m.exec(fs.readFileSync('/etc/nsswitch.conf', 'utf8'))?.[0];
    const tail = await gate('grep -E "^(passwd|group|hosts):" /etc/nsswitch.conf; getent passwd root | cut -d: -f1,3; getent passwd 4242 || echo "no 4242"');
    const lines = tail.trim().split('\n');
    assert.deepEqual(lines.filter((line) => /^(passwd|group):/.test(line)), ['passwd: files', 'group: files'], tail);
    if (hostHosts !== undefined) assert.ok(lines.includes(hostHosts), `the host's hosts line is kept: ${tail}`);
    assert.ok(lines.includes('root:0') && lines.includes('no 4242'), tail);
  });

  it('kernel settings: the host shell opens vm.swappiness and kernel.core_pattern for writing (the trap); the sandbox cannot, and /proc/sys is a read-only mount', async () => {
    const probe = [openForWriting('/proc/sys/vm/swappiness', 'swappiness'), openForWriting('/proc/sys/kernel/core_pattern', 'core_pattern')].join('; ');
    assert.match(await host(probe), /OPEN:swappiness\nOPEN:core_pattern/);
    const tail = await gate(`${probe}; awk '$5 ~ /^\\/proc\\/(sys|irq|bus|fs)$/ { split($6, o, ","); print $5, o[1] }' /proc/self/mountinfo`);
    assert.match(tail, /REFUSED:swappiness\nREFUSED:core_pattern/);
    // Read-only for any uid, not just the gate's: the mount itself.
    for (const entry of ['/proc/sys', '/proc/irq', '/proc/bus', '/proc/fs'].filter((e) => fs.existsSync(e))) assert.match(tail, new RegExp(`^${entry} ro$`, 'm'), entry);
  });

  it('masked kernel state: the host reads /proc/timer_list and /proc/keys and lists /sys/firmware (the trap); in the sandbox nothing of them can be read', async () => {
    const probe = 'echo "timer_list=$(cat /proc/timer_list 2>/dev/null | wc -c)"; echo "keys=$(cat /proc/keys 2>/dev/null | wc -c)"; echo "firmware=$(ls -A /sys/firmware 2>/dev/null | wc -l)"';
    const trap = await host(probe);
    assert.match(trap, /timer_list=[1-9]/);
    assert.match(trap, /firmware=[1-9]/);
    const tail = await gate(probe);
    assert.match(tail, /timer_list=0\nkeys=0\nfirmware=0/);
  });

  it("root's session keyring: a key added there is readable from the host shell, even after a switch to the gate uid (possession); inside the sandbox keyctl is refused", () => {
    const secret = `candor-key-${process.pid}-${Date.now()}`;
    const user = sandbox.user ?? assert.fail('as root the sandbox switches user');
    const inner = 'keyctl print "$KEY_ID" 2>&1 | sed "s/^/INSIDE: /"; keyctl describe "$KEY_ID" 2>&1 | sed "s/^/INSIDE: /"';
    const invocation = sandbox.wrap(inner, { cwd: clone, home: tempDir('candor-home-'), tmp: tempDir('candor-tmp-'), network: false, depsWritable: false });
    // A session keyring of its own: the key never reaches the keyring of whoever runs the tests.
    const script = [
      'export KEY_ID=$(keyctl add user candor-gate-test "$SECRET" @s)',
      'echo "HOST: $(keyctl print "$KEY_ID")"',
      `echo "SWITCHED: $(setpriv --reuid=${user.uid} --regid=${user.gid} --clear-groups keyctl print "$KEY_ID" 2>&1)"`,
      '"$@"',
    ].join('\n');
    const result = runWrapped({ file: 'keyctl', args: ['session', '-', 'sh', '-c', script, 'sh', invocation.file, ...invocation.args], inputs: invocation.inputs }, { cwd: clone, env: { ...process.env, SECRET: secret } });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`HOST: ${secret}`), 'the trap: root reads it');
    assert.match(result.stdout, new RegExp(`SWITCHED: ${secret}`), 'and so does the gate uid outside the sandbox: the keyring is possessed, whoever the uid');
    const inside = result.stdout.split('\n').filter((line) => line.startsWith('INSIDE: '));
    assert.deepEqual(inside, ['INSIDE: keyctl_read_alloc: Operation not permitted', 'INSIDE: keyctl_describe_alloc: Operation not permitted'], result.stdout);
  });

  it('a unix socket of a host service under /var: the host shell reaches it (the trap); the sandbox has no /var at all', async () => {
    const dir = fs.mkdtempSync(path.join('/var/lib', 'candor-test-'));
    const socketPath = path.join(dir, 'service.sock');
    const server = net.createServer((socket) => socket.on('error', () => undefined).end('HELLO\n'));
    try {
      fs.chmodSync(dir, 0o755);
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      // Open to every uid: only its absence keeps the gate out.
      fs.chmodSync(socketPath, 0o777);
      const probe = `node -e "require('net').connect('${socketPath}').on('data',(d)=>{console.log('ANSWERED '+d);process.exit(0)}).on('error',(e)=>{console.log('REFUSED '+e.code);process.exit(0)})"; ls -d /var /srv /mnt /media /home 2>&1 | sed 's/^/LS: /'`;
      assert.match(await host(probe), /ANSWERED HELLO/);
      const tail = await gate(probe);
      assert.match(tail, /REFUSED ENOENT/);
      assert.doesNotMatch(tail, /ANSWERED/);
      for (const absent of ['/var', '/srv', '/mnt', '/media', '/home']) assert.match(tail, new RegExp(`LS: .*${absent}.*No such file`), absent);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a 0600 key file of root under /etc: the host shell reads it (the trap); the gate user cannot, though /etc is there', async () => {
    const dir = fs.mkdtempSync(path.join('/etc', 'candor-test-'));
    try {
      fs.chmodSync(dir, 0o755);
      fs.writeFileSync(path.join(dir, 'server.key'), 'PRIVATE-TLS-KEY\n', { mode: 0o600 });
      const probe = `cat ${dir}/server.key 2>&1; cat /etc/hostname > /dev/null && echo ETC-READABLE`;
      assert.match(await host(probe), /PRIVATE-TLS-KEY/);
      const tail = await gate(probe);
      assert.match(tail, /Permission denied/);
      assert.match(tail, /ETC-READABLE/);
      assert.doesNotMatch(tail, /PRIVATE-TLS-KEY/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a data folder inside a folder the sandbox shows (/opt): the host shell reads its records (the trap); the sandbox shows only the clone inside it, writable', async () => {
    const dataDir = fs.mkdtempSync(path.join('/opt', 'candor-test-'));
    try {
      fs.chmodSync(dataDir, 0o755);
      write(dataDir, 'evolution.jsonl', 'DATA-SECRET\n');
      const inside = path.join(dataDir, 'scratch', 'repo');
      write(inside, '.git/HEAD', 'ref: refs/heads/main\n');
      const probe = `cat ${dataDir}/evolution.jsonl 2>&1; ls -A ${dataDir}; touch made-here && echo CLONE-WRITABLE`;
      assert.match(await host(probe), /DATA-SECRET/);
      const tail = await gate(probe, { cwd: inside, hidden: [dataDir] });
      assert.doesNotMatch(tail, /DATA-SECRET/);
      assert.match(tail, /No such file[\s\S]*^scratch$[\s\S]*CLONE-WRITABLE/m);
      assert.ok(fs.existsSync(path.join(inside, 'made-here')));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('namespaces: the host shell makes a user and a network namespace and clones into a new one (the trap); the sandbox refuses each, while fork, threads, node and clone3 callers still work', async () => {
    const calls = CALLS[arch];
    const probe = [
      'unshare -n true 2>/dev/null && echo UNSHARE-N || echo REFUSED-N',
      'unshare -r true 2>/dev/null && echo UNSHARE-R || echo REFUSED-R',
      // clone(CLONE_NEWUSER | SIGCHLD), the raw call: the child exits at once.
      `perl -e 'my $r = syscall(${calls.clone}, 0x10000000 | 17, 0, 0, 0, 0); exit 0 if $r == 0; if ($r < 0) { print "CLONE-REFUSED:", $! + 0, "\\n" } else { waitpid($r, 0); print "CLONED\\n" }'`,
      `perl -e 'syscall(${calls.clone3}, 0, 0); print "CLONE3:", $! + 0, "\\n"'`,
      "sh -c 'sleep 0 & wait' && echo FORK-OK",
      `node -e "require('child_process').execFileSync('true'); new (require('worker_threads').Worker)('0', { eval: true }).on('exit', () => console.log('NODE-OK'))"`,
    ].join('\n');
    const trap = await host(probe);
    assert.match(trap, /UNSHARE-N\nUNSHARE-R\nCLONED\nCLONE3:22\nFORK-OK\nNODE-OK/);
    const tail = await gate(probe);
    assert.match(tail, /REFUSED-N\nREFUSED-R\nCLONE-REFUSED:1\nCLONE3:38\nFORK-OK\nNODE-OK/, 'EPERM for namespaces, ENOSYS for clone3');
  });

  it('socket families and the kernel log: the host shell opens AF_VSOCK and AF_PACKET sockets and reads the kernel log (the trap); the sandbox gets EAFNOSUPPORT and EPERM, while local, IP and netlink sockets open as on the host', async () => {
    const calls = CALLS[arch];
    // Each line: NAME:OPEN, or NAME:<errno>. Raw calls, so no library stands between the probe and the kernel.
    const call = (name: string, nr: number, args: string): string => `perl -e '$pair = pack("i2", 0, 0); $r = syscall(${nr}, ${args}); print "${name}:", ($r >= 0 ? "OPEN" : $! + 0), "\\n"'`;
    const probe = [
      call('VSOCK', calls.socket, '40, 1, 0'),
      call('PACKET', calls.socket, '17, 3, 768'),
      call('UNIX', calls.socket, '1, 1, 0'),
      call('INET', calls.socket, '2, 2, 0'),
      call('INET6', calls.socket, '10, 2, 0'),
      call('NETLINK', calls.socket, '16, 3, 0'),
      call('UNIX-PAIR', calls.socketpair, '1, 1, 0, $pair'),
      call('VSOCK-PAIR', calls.socketpair, '40, 1, 0, $pair'),
      // SYSLOG_ACTION_SIZE_BUFFER: harmless, and refused to an unprivileged process only while kernel.dmesg_restrict is 1.
      call('SYSLOG', calls.refused.syslog ?? assert.fail('syslog has a number'), '10, 0, 0'),
    ].join('\n');
    const lines = (tail: string): Map<string, string> => new Map(tail.trim().split('\n').map((line) => line.split(':') as [string, string]));
    const host = lines(await gate(probe, { sandbox: NO_SANDBOX }));
    assert.equal(host.get('PACKET'), 'OPEN', 'the trap: root on the host opens a raw packet socket');
    assert.equal(host.get('SYSLOG'), 'OPEN', 'the trap: and reads the kernel log');
    if (host.get('VSOCK') === 'OPEN') assert.equal(host.get('VSOCK'), 'OPEN', 'the trap: this host has vsock, to its hypervisor');
    else console.log(`      (AF_VSOCK: this kernel answers ${host.get('VSOCK')} on the host too; the decoded filter shows its refusal)`);
    const inside = lines(await gate(probe));
    assert.equal(inside.get('VSOCK'), '97', 'EAFNOSUPPORT');
    assert.equal(inside.get('PACKET'), '97', 'EAFNOSUPPORT: the filter, before the missing capability');
    assert.equal(inside.get('VSOCK-PAIR'), '97');
    assert.equal(inside.get('SYSLOG'), '1', 'EPERM');
    for (const name of ['UNIX', 'INET', 'INET6', 'NETLINK', 'UNIX-PAIR']) assert.equal(inside.get(name), host.get(name), name);
    assert.equal(inside.get('UNIX'), 'OPEN');

    // The filter alone, under root with every capability: the kernel log and AF_PACKET are open without it and refused with it.
    const bwrap = bwrapPath();
    const everything = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--cap-add', 'ALL'];
    const bare = runWrapped({ file: bwrap, args: [...everything, '--', 'sh', '-c', probe] });
    assert.match(bare.stdout, /^PACKET:OPEN$/m);
    assert.match(bare.stdout, /^SYSLOG:OPEN$/m, bare.stderr);
    const filtered = runWrapped({ file: bwrap, args: [...everything, '--seccomp', '3', '--', 'sh', '-c', probe], inputs: [gateSeccompProgram()] });
    assert.match(filtered.stdout, /^PACKET:97$/m, filtered.stderr);
    assert.match(filtered.stdout, /^VSOCK:97$/m);
    assert.match(filtered.stdout, /^SYSLOG:1$/m);
  });

  it("/proc/1/cmdline shows bubblewrap's arguments, host paths included (a hidden data folder's too); every one of those paths the command finds anyway, as a folder it sees or in /proc/self/mountinfo, so it is left as it is", async () => {
    const dataDir = fs.mkdtempSync(path.join('/opt', 'candor-test-'));
    try {
      fs.chmodSync(dataDir, 0o755);
      const inside = path.join(dataDir, 'scratch', 'repo');
      write(inside, '.git/HEAD', 'ref: refs/heads/main\n');
      // Every argument that is an absolute path: found when it exists inside, or when mountinfo names it (a mount's root or mount point).
      const probe = [
        "tr '\\0' '\\n' < /proc/1/cmdline > /tmp/args",
        'while IFS= read -r arg; do case "$arg" in /*) echo "PATH: $arg"; [ -e "$arg" ] || awk -v p="$arg" \'$4 == p || $5 == p { found = 1 } END { exit !found }\' /proc/self/mountinfo || echo "ONLY-IN-CMDLINE: $arg";; esac; done < /tmp/args',
      ].join('\n');
      const tail = await gate(probe, { cwd: inside, hidden: [dataDir] });
      const named = tail.split('\n').filter((line) => line.startsWith('PATH: ')).map((line) => line.slice('PATH: '.length));
      assert.ok(named.includes(dataDir), `the finding: bubblewrap's arguments name the hidden data folder: ${tail}`);
      assert.ok(named.includes(inside) && named.length > 20, tail);
      assert.deepEqual(tail.split('\n').filter((line) => line.startsWith('ONLY-IN-CMDLINE')), [], 'no path is told by /proc/1/cmdline alone');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('git inside the gate works on the clone whose .git stays root\'s (it would say "dubious ownership" otherwise)', async () => {
    const repo = path.join(tempDir('candor-data-'), 'scratch', 'repo');
    fs.mkdirSync(repo, { recursive: true });
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' };
    for (const args of [['init', '-q', '-b', 'main'], ['commit', '-q', '--allow-empty', '-m', 'first']]) spawnSync('git', args, { cwd: repo, env });
    const user = sandbox.user ?? assert.fail('as root the sandbox switches user');
    // The trap: the gate user's git, on the host, in a work tree of its own with root's .git.
    await prepareForGateUser(repo, user);
    fs.chmodSync(path.dirname(path.dirname(repo)), 0o755);
    const trap = spawnSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', 'env', `HOME=${os.tmpdir()}`, 'git', 'log', '--format=%s'], { cwd: repo, encoding: 'utf8' });
    assert.match(trap.stderr, /dubious ownership/);
    const tail = await gate('git log --format=%s; git status --porcelain | wc -l', { cwd: repo });
    assert.match(tail, /^first\n0\n$/);
  });

  it('Candor not root (bubblewrap started as an ordinary uid): no switch, a user namespace of its own that cannot nest one, the same filter and read-only /proc/sys', async () => {
    const uid = 65001;
    const user = { uid, gid: uid, name: 'someone' };
    const run = await gateRun(user);
    fs.chmodSync(path.dirname(run.cwd), 0o755);
    const asUser = (file: string, args: readonly string[]): ReturnType<typeof spawnSync> =>
      spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', file, ...args], { cwd: run.cwd, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: run.home } });
    const probe = `id -u; unshare -r true 2>/dev/null && echo UNSHARE-R || echo REFUSED-R; ${openForWriting('/proc/sys/vm/swappiness', 'swappiness')}; node -e "console.log('NODE-OK')"`;
    assert.match(String(asUser('/bin/sh', ['-c', probe]).stdout), /^65001\nUNSHARE-R\nREFUSED:swappiness\nNODE-OK\n$/, 'the trap: an ordinary uid makes a user namespace');
    // Its own home and PATH: root's would name folders this uid cannot reach.
    const invocation = bubblewrapInvocation(bwrapPath(), probe, run, { home: run.home, env: { PATH: '/usr/bin:/bin' } });
    const result = runWrapped({ file: 'setpriv', args: [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', invocation.file, ...invocation.args], inputs: invocation.inputs }, { cwd: run.cwd, env: { PATH: '/usr/bin:/bin', HOME: run.home } });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^65001\nREFUSED-R\nREFUSED:swappiness\nNODE-OK\n$/);
    assert.ok(invocation.args.includes('--disable-userns') && invocation.args.includes('--unshare-user'));
  });
});

function bwrapPath(): string {
  return spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim() || assert.fail('bwrap is not installed: apt-get install bubblewrap');
}

describe('the gate user: which uid may be it, its passwd, and the clone made its own', () => {
  afterEach(() => removeTempDirs());
  const user = { uid: 64999, gid: 64999, name: 'candor-gate' };
  const passwd = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nalice:x:64999:100::/home/alice:/bin/sh\n';
  const group = 'root:x:0:\ndevs:x:64999:alice\n';

  it('only Candor as root switches; a uid an account or group has is refused, unless the account is candor-gate', () => {
    assert.equal(gateUserFor(64999, 1000), undefined, 'not root: commands run as Candor\'s own user');
    assert.deepEqual(gateUserFor(64999, 0), user);
    assert.match(gateUserProblem(user, passwd, '') ?? '', /uid 64999 .*belongs to the account "alice"/);
    assert.match(gateUserProblem(user, '', group) ?? '', /gid 64999 .*belongs to the group "devs"/);
    assert.equal(gateUserProblem(user, 'candor-gate:x:64999:64999::/nonexistent:/usr/sbin/nologin\n', 'candor-gate:x:64999:\n'), undefined, 'an account made for it is fine');
    assert.equal(gateUserProblem(user, 'root:x:0:0::/root:/bin/sh\n', 'root:x:0:\n'), undefined);
    for (const uid of [0, 65534, -1, 2 ** 32, 1.5, Number.NaN]) assert.match(gateUserProblem({ ...user, uid }, '', '') ?? '', /cannot be the gate's unprivileged uid/, String(uid));
  });

  it('its passwd names it with the throwaway home; a home that would break the file format is not written in', () => {
    assert.match(gatePasswd(user, '/tmp/candor-gate-x/home'), /^candor-gate:x:64999:64999:[^:]*:\/tmp\/candor-gate-x\/home:\/bin\/sh$/m);
    assert.match(gatePasswd(user, '/tmp/a:b\nroot::0:0::/:/bin/sh'), /^candor-gate:x:64999:64999:[^:]*:\/nonexistent:\/bin\/sh$/m);
    assert.equal(gatePasswd(user, '/tmp/a:b\nroot::0:0::/:/bin/sh').split('\n').filter((line) => line.startsWith('root:')).length, 1);
    assert.match(gateGroup(user), /^candor-gate:x:64999:$/m);
  });

  it("its nsswitch.conf: the user and group databases from files alone, every other line as the host has it", () => {
    const host = '# comment\npasswd:         files systemd\ngroup:  sss files\nshadow: files\nhosts:          files mdns4_minimal [NOTFOUND=return] dns\nnetgroup:       nis';
    const text = gateNsswitch(host);
    assert.deepEqual(text.split('\n').filter((line) => /^(passwd|group|shadow|gshadow|initgroups):/.test(line)), ['passwd: files', 'group: files', 'shadow: files', 'gshadow: files', 'initgroups: files']);
    assert.ok(text.includes('hosts:          files mdns4_minimal [NOTFOUND=return] dns\n') && text.includes('netgroup:       nis\n') && text.includes('# comment\n'), text);
    assert.doesNotMatch(text, /systemd|sss/);
    assert.equal(gateNsswitch(''), 'passwd: files\ngroup: files\nshadow: files\ngshadow: files\ninitgroups: files\n');
  });

  it('prepareForGateUser: the work tree becomes the gate user\'s; .git, a link\'s target, another name of an outside file and a FIFO keep their owner (chown through them would not)', async function () {
    skipUnless(this, cannotChown());
    const outside = tempDir('candor-outside-');
    const clone = tempDir('candor-clone-');
    write(clone, 'src/a.js', 'a\n');
    write(clone, '.git/HEAD', 'ref: refs/heads/main\n');
    write(outside, 'target.txt', 'target\n');
    write(outside, 'linked.txt', 'linked\n');
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(clone, 'link'));
    fs.linkSync(path.join(outside, 'linked.txt'), path.join(clone, 'hardlink'));
    assert.equal(spawnSync('mkfifo', [path.join(clone, 'fifo')]).status, 0);
    // The trap, on a twin pair: chown through the names changes the files outside.
    write(outside, 'twin-target.txt', 'x\n');
    write(outside, 'twin-linked.txt', 'x\n');
    fs.symlinkSync(path.join(outside, 'twin-target.txt'), path.join(outside, 'twin-link'));
    fs.linkSync(path.join(outside, 'twin-linked.txt'), path.join(outside, 'twin-hardlink'));
    fs.chownSync(path.join(outside, 'twin-link'), user.uid, user.gid);
    fs.chownSync(path.join(outside, 'twin-hardlink'), user.uid, user.gid);
    assert.equal(fs.statSync(path.join(outside, 'twin-target.txt')).uid, user.uid);
    assert.equal(fs.statSync(path.join(outside, 'twin-linked.txt')).uid, user.uid);

    await prepareForGateUser(clone, user);
    for (const own of ['', 'src', 'src/a.js']) assert.equal(fs.lstatSync(path.join(clone, own)).uid, user.uid, own || 'the clone');
    assert.equal(fs.lstatSync(path.join(clone, 'link')).uid, user.uid, 'the link itself');
    assert.equal(fs.statSync(path.join(outside, 'target.txt')).uid, 0, 'its target keeps its owner');
    assert.equal(fs.statSync(path.join(outside, 'linked.txt')).uid, 0, 'a second name of an outside file keeps its owner');
    assert.equal(fs.lstatSync(path.join(clone, 'fifo')).uid, 0);
    assert.equal(fs.lstatSync(path.join(clone, '.git')).uid, 0);
    assert.equal(fs.lstatSync(path.join(clone, '.git/HEAD')).uid, 0);
  });

  it('prepareForGateUser: a dependency folder setup made (the gate user\'s) is not walked again; one root made is', async function () {
    skipUnless(this, cannotChown());
    const clone = tempDir('candor-clone-');
    write(clone, 'node_modules/dep/index.js', 'x\n');
    await prepareForGateUser(clone, user);
    assert.equal(fs.lstatSync(path.join(clone, 'node_modules/dep/index.js')).uid, user.uid, 'a root-made folder is walked');
    // Now one file inside is root's again; the folder is the gate user's, so the walk leaves it.
    fs.chownSync(path.join(clone, 'node_modules/dep/index.js'), 0, 0);
    write(clone, 'src/new.js', 'y\n');
    await prepareForGateUser(clone, user);
    assert.equal(fs.lstatSync(path.join(clone, 'src/new.js')).uid, user.uid);
    assert.equal(fs.lstatSync(path.join(clone, 'node_modules/dep/index.js')).uid, 0);
  });
});
