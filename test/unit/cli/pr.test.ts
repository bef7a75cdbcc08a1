import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVOLUTION_FILE, repoPaths } from '../../../src/core/evolution/paths';
import { readRuns } from '../../../src/core/evolution/record';
import { readJsonLines } from '../../../src/core/jsonl';
import type { FakeGitHub } from '../../helpers/fakeGitHub';
import { GIT_SPY, callsIn, readSpyLog, writingCalls } from '../../helpers/gitSpy';
import { git, loopScenario, removeTempDirs, tempDir, triageAnswer, workspaceRepo, write } from '../core/evolution/helpers';
import { SECRET, SECRET_ENV, TOKEN, fakeWithAgent, filesHolding, refsOf, shippedRun, untouched, type Shipped } from '../core/evolution/pullRequestHelpers';
import { buildCli, runCli, type CliResult } from './helpers';

/**
 * `candor pr` end to end: the bundled CLI in a child process, real git
 * (through a spy that logs every call, its environment included), a bare
 * repository as the remote, and the fake GitHub over HTTP (--github-api).
 */

/** A `git` first on PATH that logs its environment and arguments, then runs the git spy (which logs the call and runs the real git). */
function envLoggingGit(): { dir: string; log: string; spyLog: string } {
  const dir = tempDir('candor-git-env-');
  const log = path.join(dir, 'env.log');
  const spyLog = path.join(dir, 'spy.log');
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  write(dir, 'bin/git', `#!/bin/sh\n{ echo "argv: $*"; env; echo; } >> '${log}'\nSPY_REAL_GIT='${real}' SPY_GIT_LOG='${spyLog}' exec '${GIT_SPY}' "$@"\n`);
  fs.chmodSync(path.join(dir, 'bin/git'), 0o755);
  return { dir: path.join(dir, 'bin'), log, spyLog };
}

function updateLines(dataDir: string): string[] {
  return readJsonLines<{ update?: string; ci?: { state: string } }>(path.join(dataDir, EVOLUTION_FILE))
    .records.filter((line) => line.update !== undefined)
    .map((line) => (line.update === 'ci' ? `ci ${line.ci?.state ?? '?'}` : (line.update ?? '')));
}

describe('CLI: candor pr (push an evolution branch and open its pull request)', function () {
  this.timeout(120_000);
  let built: Awaited<ReturnType<typeof buildCli>>;
  let fake: FakeGitHub | undefined;
  let gitEnv: ReturnType<typeof envLoggingGit>;
  let s: Shipped;

  before(async () => {
    built = await buildCli();
  });
  after(() => built?.remove());
  beforeEach(async () => {
    s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    gitEnv = envLoggingGit();
  });
  afterEach(async () => {
    await fake?.close();
    fake?.assertValid();
    fake = undefined;
    removeTempDirs();
  });

  const api = (): string => fake?.apiUrl ?? assert.fail('no fake');
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    GITHUB_TOKEN: TOKEN,
    // A copy of the token under a name that does not look like a credential: git must not see it either.
    HARMLESS_LOOKING: TOKEN,
    [SECRET_ENV]: SECRET,
    PATH: `${gitEnv.dir}:${process.env.PATH ?? ''}`,
    ...extra,
  });
  const pr = (args: string[] = [], extra: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(built.cli, ['pr', s.branch, '--repository', s.agent, '--data-dir', s.dataDir, '--github-api', api(), ...args], env(extra));

  it('bundles @octokit/rest into the CLI: no require of it is left', () => {
    assert.doesNotMatch(fs.readFileSync(built.cli, 'utf8'), /require\(["']@octokit/);
  });

  it('without --yes: prints the preview, redacted, pushes nothing and exits 1 saying how to push', async () => {
    const result = await pr();
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /^ {2}remote: {7}origin https:\/\/github\.com\/alice\/agent\.git$/m);
    assert.match(result.stdout, /^ {2}pushed to: {4}elsewhere: the repository's remote\.origin\.pushurl sends the push to another URL$/m, 'the push URL of the test setup differs from the URL shown, and the preview says so');
    assert.match(result.stdout, /^ {2}repository: {3}alice\/agent \(PUBLIC: anyone can read what is pushed/m);
    assert.match(result.stdout, new RegExp(`^  branch:       ${s.branch} at ${s.commit.slice(0, 12)}, only in the scratch clone`, 'm'));
    assert.match(result.stdout, /^ {2}into: {9}alice\/agent, base main$/m);
    assert.match(result.stdout, /^commit message:\n {2}\| candor: The greeting is too short/m);
    assert.match(result.stdout, /^title: Make greet\(\) say hello world\.$/m);
    assert.match(result.stdout, new RegExp(`^  \\| Candor-Rant: ${s.rantId}$`, 'm'));
    assert.match(result.stderr, /^nothing pushed: run again with --yes to push candor\/rant-\S+ to origin and open the pull request$/m);
    for (const text of [result.stdout, result.stderr]) {
      assert.ok(!text.includes(SECRET), 'the secret planted in the rant is redacted');
      assert.ok(!text.includes(TOKEN));
    }
    assert.deepEqual(refsOf(s.bare), [], 'the bare remote has no new ref');
    assert.equal(fake?.calls('pulls/create').length, 0);
  });

  it('--yes: the one branch lands in the remote (no tags, no hook), the pull request opens with the trailer, pr and ci pending are recorded; again: the same one, not a second', async () => {
    const before = untouched(s.agent, s.branch);
    const result = await pr(['--yes']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const url = `${fake?.origin ?? ''}/html/alice/agent/pull/1`;
    assert.match(result.stdout, /^opened pull request #1$/m);
    assert.match(result.stdout, /^CI: pending \(recorded in evolution\.jsonl\)$/m);
    assert.ok(result.stdout.endsWith(`pull request: ${url}\n`), result.stdout);
    assert.deepEqual(refsOf(s.bare), [`refs/heads/${s.branch} ${s.commit}`], 'only that ref: no tag, no other branch');
    assert.deepEqual(untouched(s.agent, s.branch), before, 'the hand-off and the push wrote the branch ref (and its remote-tracking ref) and nothing else');
    assert.equal(fs.existsSync(s.hookMarker), false, 'the pre-push hook did not run');
    const created = fake?.calls('pulls/create') ?? [];
    assert.equal(created.length, 1);
    assert.ok((created[0]?.body as { body: string }).body.endsWith(`\nCandor-Rant: ${s.rantId}`));
    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending']);
    assert.deepEqual(readRuns(s.dataDir).find((r) => r.run === s.run)?.pr, { url, number: 1 });

    const again = await pr(['--yes']);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /^ {2}already open: #1 /m);
    assert.match(again.stdout, /^a pull request was already open for candor\/rant-\S+: #1$/m);
    assert.ok(again.stdout.endsWith(`pull request: ${url}\n`));
    assert.equal(fake?.state.pulls.length, 1, 'never a second one');

    // The token: not printed, in no file of the data folder, never in git's environment or arguments.
    for (const out of [result, again]) assert.ok(!`${out.stdout}${out.stderr}`.includes(TOKEN));
    assert.deepEqual(filesHolding(s.dataDir, TOKEN), []);
    const gitLog = fs.readFileSync(gitEnv.log, 'utf8');
    assert.match(gitLog, /argv: .* push --no-follow-tags --recurse-submodules=no origin refs\/heads\/candor\//, 'the push went through this git');
    assert.ok(!gitLog.includes(TOKEN), 'no git process saw the token, under any name');
    assert.ok(!/^GITHUB_TOKEN=/m.test(gitLog));
    assert.deepEqual(writingCalls(callsIn(readSpyLog(gitEnv.spyLog), s.agent)), [], 'every write in the agent repository was a shaped one');
    assert.ok(fake?.requests.every((r) => r.authorization === `Bearer ${TOKEN}`));
  });

  it('--wait follows CI (queued, then failed), records it, and still exits 0: the pull request is open', async () => {
    fake?.setChecks(s.commit, [{ name: 'build', status: 'queued' }], [{ name: 'build', status: 'completed', conclusion: 'failure' }]);
    const result = await pr(['--yes', '--wait']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^CI: pending \(1 check; build: queued\)/m);
    assert.match(result.stdout, /^CI done: failed \(build: failure\) — \S+\/alice\/agent\/runs\/\d+$/m);
    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending', 'ci failed']);
    assert.match(result.stdout, /pull request: \S+\/pull\/1\n$/);
  });

  it('the model\'s summary and the gate\'s tail with escapes: the preview and the pull request show them as marks, never as bytes', async () => {
    const hostile = '\u001b]52;c;Y3VybCB8IHNo\u0007\u001b[1A\u001b[2K\u009b2J\u007f';
    s = shippedRun({ summary: `Make greet() say hello world.${hostile}\n\nLonger.${hostile}`, tail: `tests ok\n${hostile}\noutcome: shipped` });
    await fake?.close();
    ({ fake } = await fakeWithAgent(s.bare));
    // eslint-disable-next-line no-control-regex -- ESC, BEL, the other C0 controls but LF, DEL, C1
    const driving = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
    // The trap, armed: the commit holds the bytes as the model wrote them.
    assert.match(git(repoPaths(s.dataDir, s.agent).scratch, 'log', '-1', '--format=%B', s.commit), driving);
    const result = await pr(['--yes']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.doesNotMatch(result.stdout, driving);
    assert.match(result.stdout, /^title: Make greet\(\) say hello world\.␛\]52;c;Y3VybCB8IHNo␇␛\[1A␛\[2K\\u\{009B\}2J␡$/m);
    const [created] = fake?.calls('pulls/create') ?? [];
    const { title, body } = created?.body as { title: string; body: string };
    assert.doesNotMatch(title, driving);
    assert.doesNotMatch(body, driving);
    assert.ok(body.includes('Longer.␛]52;c;Y3VybCB8IHNo␇␛[1A␛[2K\\u{009B}2J␡'), body);
    assert.ok(body.includes('tests ok\n␛]52;c;Y3VybCB8IHNo␇␛[1A␛[2K\\u{009B}2J␡\noutcome: shipped'), body);
  });

  it('taken and added to by the user: pushes the agent repository\'s branch as it is, and says so', async () => {
    assert.equal((await runCli(built.cli, ['take', s.branch, '--repository', s.agent, '--data-dir', s.dataDir], env())).code, 0);
    git(s.agent, 'checkout', '-q', s.branch);
    write(s.agent, 'NOTES.md', 'mine\n');
    git(s.agent, 'add', 'NOTES.md');
    git(s.agent, 'commit', '-q', '-m', 'My own touch');
    git(s.agent, 'checkout', '-q', 'main');
    const mine = git(s.agent, 'rev-parse', `refs/heads/${s.branch}`).trim();
    const result = await pr(['--yes']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /with commits you added: it is pushed as it is/);
    assert.match(result.stdout, /^pushed candor\/rant-\S+ to origin: the agent repository's branch as it is, with the commits you added$/m);
    assert.deepEqual(refsOf(s.bare), [`refs/heads/${s.branch} ${mine}`]);
  });

  it('faults exit 1 with the fix: no token, a refused token, a missing scope, no such remote, a branch no run shipped, a rejected push', async () => {
    const noToken = await pr(['--yes'], { GITHUB_TOKEN: '', HARMLESS_LOOKING: '' });
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /^pr: No GitHub token for http:\/\/127\.0\.0\.1:\d+\. Set GITHUB_TOKEN to a GitHub token with the "repo" scope/m);
    const refused = await pr([], { GITHUB_TOKEN: 'ghp_Expired0token0abcdefghijklmnopqrstuvw' });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^pr: GitHub refused the token \(HTTP 401: Bad credentials\): it is missing, expired or revoked\. Set GITHUB_TOKEN/m);
    assert.ok(!refused.stderr.includes('ghp_Expired0token'));
    fake?.fail('repos/get', { kind: 'missing-scope', accepted: 'repo', has: 'gist' });
    const scope = await pr([]);
    assert.equal(scope.code, 1);
    assert.match(scope.stderr, /the token lacks the scope this needs: "repo" \(it has "gist"\)/);
    const noRemote = await pr(['--remote', 'upstream']);
    assert.equal(noRemote.code, 1);
    assert.match(noRemote.stderr, /has no remote named "upstream": add it/);
    const unknown = await runCli(built.cli, ['pr', 'candor/rant-nobody', '--repository', s.agent, '--data-dir', s.dataDir, '--github-api', api()], env());
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^pr: No evolution run shipped candor\/rant-nobody/m);

    const tree = git(s.agent, 'rev-parse', 'main^{tree}').trim();
    const theirs = git(s.agent, 'commit-tree', tree, '-p', 'main', '-m', 'someone else').trim();
    git(s.agent, '-c', 'push.followTags=false', 'push', '-q', '--no-verify', s.bare, `${theirs}:refs/heads/${s.branch}`);
    const rejected = await pr(['--yes']);
    assert.equal(rejected.code, 1);
    assert.match(rejected.stderr, /^pr: origin rejected the push of candor\/rant-\S+: .*non-fast-forward.*never forced/m);
    assert.deepEqual(refsOf(s.bare), [`refs/heads/${s.branch} ${theirs}`]);
    assert.equal(fake?.calls('pulls/create').length, 0);
  });

  it('a remote that is not GitHub exits 1 naming what to set; usage errors exit 2', async () => {
    git(s.agent, 'remote', 'set-url', 'origin', 'https://gitlab.com/alice/agent.git');
    const gitlab = await runCli(built.cli, ['pr', s.branch, '--repository', s.agent, '--data-dir', s.dataDir], env());
    assert.equal(gitlab.code, 1);
    assert.match(gitlab.stderr, /^pr: The remote is on gitlab\.com, not github\.com: set candor\.github\.apiUrl .*or pass --github-api/m);
    for (const args of [['pr'], ['pr', s.branch, '--data-dir', s.dataDir], ['pr', s.branch, '--repository', s.agent, '--data-dir', s.dataDir, '--force'], ['pr', s.branch, 'candor/rant-other', '--repository', s.agent, '--data-dir', s.dataDir]]) {
      const usage = await runCli(built.cli, args, env());
      assert.equal(usage.code, 2, `${args.join(' ')}: ${usage.stdout}${usage.stderr}`);
      assert.match(usage.stderr, /usage:\n {2}candor pr BRANCH/);
    }
    assert.deepEqual(refsOf(s.bare), []);
  });

  it('candor evolve --github-api, with GITHUB_TOKEN set: reads the CI of the open pull request first and records it', async () => {
    assert.equal((await pr(['--yes'])).code, 0);
    fake?.setChecks(s.commit, [{ name: 'build', status: 'completed', conclusion: 'success' }]);
    // Triage answers the rant (already acted on) as a confusion: the run changes nothing and needs no sandbox.
    const scenario = path.join(s.dataDir, 'scenario.json');
    write(s.dataDir, 'scenario.json', JSON.stringify(loopScenario(triageAnswer([{ id: s.rantId, class: 'confusion', answer: 'It says hello world now.' }]), undefined)));
    const evolve = (extra: string[], environment: NodeJS.ProcessEnv): Promise<CliResult> => runCli(built.cli, ['evolve', '--repository', s.agent, '--data-dir', s.dataDir, '--scenario', scenario, '--test-command', 'node test.js', ...extra], environment);
    const result = await evolve(['--github-api', api()], env());
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^CI of pull request #1 \(run \S+\): passed \(1 check\)/m);
    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending', 'ci passed']);
    assert.equal(readRuns(s.dataDir).find((r) => r.run === s.run)?.ci?.state, 'passed');
    assert.ok(!result.stdout.includes(TOKEN));

    const noToken = await evolve([], env({ GITHUB_TOKEN: '' }));
    assert.equal(noToken.code, 0, noToken.stdout + noToken.stderr);
    assert.doesNotMatch(noToken.stdout, /CI of pull request/, 'passed: nothing is waiting any more');
  });
});

describe('CLI: candor evolve reads CI\'s culprit on the default branch (GITHUB_TOKEN, --github-api)', function () {
  this.timeout(120_000);
  let built: Awaited<ReturnType<typeof buildCli>>;
  let fake: FakeGitHub | undefined;
  before(async () => {
    built = await buildCli();
  });
  after(() => built?.remove());
  afterEach(async () => {
    await fake?.close();
    fake?.assertValid();
    fake = undefined;
    removeTempDirs();
  });

  /** An agent repository whose main ends with a Candor change that CI failed while its parent passed (the local gate passes it). */
  async function brokenByCandor(): Promise<{ agent: string; bare: string; dataDir: string; parent: string; culprit: string }> {
    const agent = workspaceRepo();
    const bare = tempDir('candor-remote-');
    git(bare, 'init', '-q', '--bare');
    git(agent, 'remote', 'add', 'origin', 'https://github.com/alice/agent.git');
    git(agent, 'config', 'remote.origin.pushurl', bare);
    const parent = git(agent, 'rev-parse', 'HEAD').trim();
    write(agent, 'greet.js', "module.exports = () => 'hello there';\n");
    git(agent, 'commit', '-q', '-am', 'candor: a longer greeting\n\nCandor-Rant: 01culpritrant');
    const culprit = git(agent, 'rev-parse', 'HEAD').trim();
    ({ fake } = await fakeWithAgent(bare));
    fake.setChecks(culprit, [{ name: 'build', status: 'completed', conclusion: 'failure' }]);
    fake.setChecks(parent, [{ name: 'build', status: 'completed', conclusion: 'success' }]);
    return { agent, bare, dataDir: tempDir('candor-data-'), parent, culprit };
  }

  const evolve = (repo: { agent: string; dataDir: string }): Promise<CliResult> =>
    runCli(built.cli, ['evolve', '--repository', repo.agent, '--data-dir', repo.dataDir, '--github-api', fake?.apiUrl ?? '', '--test-command', 'node test.js'], { GITHUB_TOKEN: TOKEN });

  it('reverts the culprit first, without the local gate, and the revert opens as a pull request the same way', async () => {
    const repo = await brokenByCandor();
    const result = await evolve(repo);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const short = repo.culprit.slice(0, 12);
    assert.match(result.stdout, new RegExp(`^CI of the default branch: ${short} \\(Candor-Rant: 01culpritrant\\) failed CI after its parent passed$`, 'm'));
    assert.match(result.stdout, new RegExp(`^outcome: revert-prepared — CI failed on ${short}`, 'm'));
    const run = readRuns(repo.dataDir).at(-1);
    assert.equal(run?.outcome, 'revert-prepared');
    const branch = run?.branch ?? assert.fail('no branch');

    const opened = await runCli(built.cli, ['pr', branch, '--repository', repo.agent, '--data-dir', repo.dataDir, '--github-api', fake?.apiUrl ?? '', '--yes'], { GITHUB_TOKEN: TOKEN });
    assert.equal(opened.code, 0, opened.stdout + opened.stderr);
    const body = (fake?.calls('pulls/create')[0]?.body as { body: string }).body;
    assert.ok(body.endsWith(`\nCandor-Revert: ${repo.culprit}`), body);
    assert.doesNotMatch(body, /^Candor-Rant:/m, 'a revert addresses no rant of its own');
    assert.deepEqual(refsOf(repo.bare).map((ref) => ref.split(' ')[0]), [`refs/heads/${branch}`]);
  });

  it('a culprit the agent repository\'s HEAD does not have: "pull the default branch first", nothing reverted (Candor never pulls)', async () => {
    const repo = await brokenByCandor();
    // The culprit is on origin/main (fetched), not on the local main the run starts from.
    git(repo.agent, 'update-ref', 'refs/remotes/origin/main', repo.culprit);
    git(repo.agent, 'reset', '-q', '--hard', repo.parent);
    const result = await evolve(repo);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /^outcome: error — .*pull the default branch first\. Candor never pulls; nothing is reverted\./m);
    assert.equal(git(repo.agent, 'rev-parse', 'HEAD').trim(), repo.parent);
  });
});
