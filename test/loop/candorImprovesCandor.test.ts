/**
 * Candor improves Candor (README, "Candor improves Candor"), end to end, as a
 * user runs it: this checkout's committed HEAD cloned as the agent
 * repository, one rant, a scripted model (the offline provider with a
 * scenario file) that adds docs/README.md, and `candor evolve` with the
 * README's gate, `npm run typecheck && npm run lint && npm run test:unit`.
 * The run must ship: so Candor's own suite passes inside Candor's own gate
 * (the gate user, no nested sandbox, the default limits, a cgroup), on the
 * change. Its own npm script (`test:loop`), never part of `test:unit`, so it
 * never runs inside the gate it starts; `npm test` runs it.
 *
 * Setup without the network: the clone's dependencies are this checkout's
 * installed `node_modules`, handed to the sandboxed setup step as a tar
 * stream from a loopback server this test starts (setup shares the host's
 * loopback while the lock file is HEAD's); nothing is fetched from a
 * registry. The checkout's own folders are not visible inside the sandbox,
 * so a plain copy cannot reach them.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { repoPaths } from '../../src/core/evolution/paths';
import { gateKey, markGated, readRuns } from '../../src/core/evolution/record';
import { STREAM_PREFIX } from '../../src/core/terminalRows';
import { buildCli, runCli } from '../unit/cli/helpers';

const CHECKOUT = path.resolve(__dirname, '../..');
const GATE = 'npm run typecheck && npm run lint && npm run test:unit';
const DOC = '# docs\n\nThe map of the code is [architecture.md](architecture.md).\n';

/** The four tests that kept Candor from shipping through its own gate: they assumed root and no file-size limit. */
const WATCHED: ReadonlyArray<{ readonly suite: string; readonly test: string; readonly reason: RegExp }> = [
  { suite: 'workspace view: bounds', test: 'refuses an untracked file over the bound at once, naming the file and the bound, and reads and copies nothing of it', reason: /file-size limit/ },
  { suite: "reading a file's lines from its end", test: 'stops reading where the caller stops: the start of a 256 MiB file is never read', reason: /file-size limit/ },
  { suite: 'workspace view: lifecycle', test: "gives what it writes to the sandbox's uid, and only what it writes", reason: /lchown of a file to another uid is refused here/ },
  { suite: 'scratch clone: a clean start for every run, whatever the last run left', test: "a work tree owned by the gate's uid: plain git refuses it as dubious, Candor's git (safe.directory) works on", reason: /lchown of a file to another uid is refused here/ },
];

/** Serves `tar -c node_modules` of the checkout, at a path only this test knows. */
async function serveDependencies(): Promise<{ readonly url: string; close(): Promise<void> }> {
  const token = randomBytes(16).toString('hex');
  const server = http.createServer((req, res) => {
    if (req.url !== `/${token}/node_modules.tar`) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-tar' });
    const tar = spawn('tar', ['-C', CHECKOUT, '-cf', '-', 'node_modules'], { stdio: ['ignore', 'pipe', 'inherit'] });
    tar.stdout.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/${token}/node_modules.tar`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * The gate's output from the `── gate` phase on: the change's gate, as the
 * suite printed it. The CLI starts every row of streamed output with
 * `STREAM_PREFIX` and shows a colour sequence by its marks (`␛[32m`); both
 * come off here.
 */
function changeGateOutput(stdout: string): string {
  const at = stdout.indexOf('\n── gate\n');
  assert.ok(at >= 0, `no change gate ran:\n${stdout.slice(-4000)}`);
  return stripVTControlCharacters(stdout.slice(at))
    .split('\n')
    .map((row) => (row.startsWith(STREAM_PREFIX) ? row.slice(STREAM_PREFIX.length) : row).replace(/␛\[[0-9;]*m/g, ''))
    .join('\n');
}

/** Passed (a ✔ line with its title), or skipped with its probe's reason in the reporter's list; never anything else. */
function assertPassedOrSkippedWithReason(output: string, watched: (typeof WATCHED)[number]): void {
  const lines = output.split('\n').map((line) => line.trim());
  if (lines.some((line) => line === `✔ ${watched.test}` || line.startsWith(`✔ ${watched.test} (`))) return;
  const listed = lines.indexOf(`- ${watched.suite} ${watched.test}`);
  assert.ok(listed >= 0, `"${watched.test}" neither passed nor was listed as skipped`);
  assert.match(lines[listed + 1] ?? '', watched.reason, `"${watched.test}" was skipped for another reason`);
}

describe('Candor improves Candor: its own suite passes inside its own gate, and a change ships', function () {
  let work: string;
  let cli: Awaited<ReturnType<typeof buildCli>>;
  let dependencies: Awaited<ReturnType<typeof serveDependencies>>;

  before(async () => {
    assert.ok(fs.existsSync(path.join(CHECKOUT, 'node_modules/.package-lock.json')), 'run `npm ci` in this checkout first: its node_modules is what the clone gets');
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-loop-')));
    cli = await buildCli();
    dependencies = await serveDependencies();
  });
  after(async () => {
    await dependencies?.close();
    cli?.remove();
    if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
  });

  it('one rant, a scripted docs change, `candor evolve` with the README gate: shipped, with the gate\'s counts recorded', async () => {
    const repository = path.join(work, 'candor');
    execFileSync('git', ['clone', '-q', '--no-hardlinks', CHECKOUT, repository], { stdio: 'pipe' });
    const head = execFileSync('git', ['-C', repository, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const dataDir = path.join(work, 'data');
    const saved = await runCli(cli.cli, ['rant', 'There is no docs/README.md pointing to the architecture map', '--data-dir', dataDir, '--project', 'candor']);
    assert.equal(saved.code, 0, saved.stderr);
    const rant = /^Rant saved \(([0-9a-z]+)\)/.exec(saved.stdout)?.[1] ?? assert.fail(saved.stdout);
    const scenario = path.join(work, 'scenario.json');
    fs.writeFileSync(
      scenario,
      JSON.stringify({
        rules: [
          { match: { system: '^You triage' }, respond: { text: JSON.stringify({ rants: [{ id: rant, class: 'agent-code', note: 'docs' }] }) } },
          { match: { system: 'scratch clone', lastRole: 'user' }, respond: { toolCalls: [{ name: 'write_file', arguments: { path: 'docs/README.md', content: DOC } }] } },
          { respond: { text: 'Added docs/README.md, pointing to the architecture map.' }, chunkChars: 500 },
        ],
      }),
    );
    const setup = `node -e "require('http').get(process.argv[1], (r) => r.pipe(process.stdout))" ${dependencies.url} | tar -xf -`;
    // One gate, not two: HEAD is recorded as passed, so the run gates only the change (HEAD plus a docs file, the same suite).
    // A suite that fails inside the gate then discards the change, and this test fails all the same, in half the time.
    markGated(repoPaths(dataDir, repository).gated, head, gateKey({ testCommand: GATE, setupCommand: setup }));
    const started = process.hrtime.bigint();
    const run = await runCli(cli.cli, ['evolve', '--repository', repository, '--data-dir', dataDir, '--scenario', scenario, '--setup-command', setup, '--test-command', GATE, '--timeout-seconds', '2400', '--no-rerun']);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const said = `${run.stdout.slice(-6000)}\n${run.stderr.slice(-2000)}`;
    console.log(`      candor evolve took ${seconds.toFixed(0)} s (triage, clone, setup, the change, its gate)`);
    assert.match(run.stdout, /\noutcome: shipped — /, said);
    assert.equal(run.code, 0, said);

    const [record] = readRuns(dataDir);
    assert.equal(record?.outcome, 'shipped', said);
    assert.equal(record?.sandbox, 'bubblewrap');
    const gate = record?.gate ?? assert.fail('no gate in the record');
    assert.equal(gate.passed, true);
    assert.ok((gate.passing ?? 0) > 1000, `the record counts what passed: ${JSON.stringify(gate)}`);
    assert.equal(gate.failing, 0);
    assert.equal(typeof gate.skipped, 'number', `the record counts what was skipped: ${JSON.stringify(gate)}`);
    console.log(`      the change's gate: ${gate.passing} passing, ${gate.skipped} skipped, ${gate.failing} failing, ${((gate.ms ?? 0) / 1000).toFixed(0)} s`);
    const scratch = repoPaths(dataDir, repository).scratch;
    const changed = execFileSync('git', ['-c', 'safe.directory=*', '-C', scratch, 'show', '--name-only', '--format=', record?.commit ?? 'HEAD'], { encoding: 'utf8' });
    assert.deepEqual(changed.trim().split('\n'), ['docs/README.md'], 'the branch holds the change, and only it');
    assert.equal(execFileSync('git', ['-C', repository, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim(), head, 'the agent repository is not touched');

    const output = changeGateOutput(run.stdout);
    for (const watched of WATCHED) assertPassedOrSkippedWithReason(output, watched);
  });
});
