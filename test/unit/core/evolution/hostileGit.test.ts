import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashTree } from '../../../helpers/hashTree';
import { skipUnless, notRoot } from '../../../helpers/preconditions';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { FIXTURE_ENV, Printer, baseOptions, callsScenario, git, greetPatch, rant, tempDir, triageAnswer, useSandboxedRuns, workspaceRepo, write } from './helpers';

/**
 * The host's own git on what the model left (docs/architecture.md,
 * "Evolution"): a repository planted in a submodule's folder, as a `.git`
 * folder or as a gitfile (one pointing at the agent repository itself), in
 * an untracked folder and in an ignored one, each carrying filter,
 * diff-driver, fsmonitor and hook markers that write a line into a folder of
 * the test's when a program of theirs runs on the host. Each plant is first
 * shown to work with plain git on a plain clone, as root; then a hostile run
 * drives it through Candor to `shipped` and through the next run's reset,
 * and another plants it while the model works; nothing runs, the agent
 * repository's `.git` stays byte for byte what it was.
 */

/** The gitlinks of the agent repository: `sub` and `sub3` as folders, `lib/sub2` as a gitfile. */
const GITLINKS = ['sub', 'lib/sub2', 'sub3'] as const;

interface AgentRepo {
  readonly ws: string;
  /** The commit each gitlink records. */
  readonly recorded: Record<(typeof GITLINKS)[number], string>;
}

/** A real agent repository with three committed submodules (populated in it, as `git submodule add` leaves them) and an ignored `fixtures/`. */
function agentRepo(): AgentRepo {
  const source = tempDir('candor-subsrc-');
  git(source, 'init', '-q', '-b', 'main');
  write(source, 's.txt', 'submodule\n');
  git(source, 'add', '-A');
  git(source, 'commit', '-qm', 'submodule');
  const ws = workspaceRepo({ 'test.sh': 'node test.js\n', '.gitignore': 'debug.log\nfixtures/\n' });
  for (const link of GITLINKS) git(ws, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', source, link);
  git(ws, 'commit', '-qm', 'submodules');
  const recorded = Object.fromEntries(GITLINKS.map((link) => [link, git(ws, 'rev-parse', `HEAD:${link}`).trim()])) as AgentRepo['recorded'];
  return { ws, recorded };
}

/**
 * Shell lines that plant, in the folder they run in: repositories whose
 * config and hooks write markers into `marks` when git runs them. `sub`'s
 * HEAD names the commit its gitlink records (so `diff-files` and `add` look
 * inside it too), `sub3`'s its own commit (so `status` refreshes it and its
 * hook runs); `lib/sub2` is a gitfile to the agent repository's own `.git`;
 * with copies of files the agent repository tracks; `nested` (a folder)
 * and `nested2` (a gitfile) are untracked folders;
 * `fixtures/repo` is in an ignored one.
 */
function plantScript(repo: AgentRepo, marks: string): string {
  const q = (text: string): string => `'${text.replace(/'/g, "'\\''")}'`;
  return [
    `M=${q(marks)}`,
    "G='git -c user.name=p -c user.email=p@p -c init.defaultBranch=main'",
    '# markers last: the plant itself must run none of them',
    'arm() {',
    '  git config filter.x.clean "sh -c \'echo $1 >> $M/filter; cat\'"',
    '  git config filter.x.smudge "sh -c \'echo $1 >> $M/filter; cat\'"',
    '  git config diff.x.textconv "sh -c \'echo $1 >> $M/diff; cat \\"\\$0\\"\'"',
    '  git config diff.x.command "sh -c \'echo $1 >> $M/diff\'"',
    '  gd=$(git rev-parse --absolute-git-dir)',
    '  printf \'#!/bin/sh\\necho %s >> %s/fsmonitor\\nexit 1\\n\' "$1" "$M" > "$gd/fsm" && chmod +x "$gd/fsm" && git config core.fsmonitor "$gd/fsm"',
    '  mkdir -p "$gd/hooks"',
    '  for h in post-index-change post-checkout pre-commit reference-transaction; do printf \'#!/bin/sh\\necho %s >> %s/hook\\n\' "$1" "$M" > "$gd/hooks/$h"; chmod +x "$gd/hooks/$h"; done',
    "  echo '* filter=x diff=x' > .gitattributes",
    '  touch -d 2001-01-01 f',
    '}',
    '# $1 folder, $2 a separate git dir (a gitfile) or "", $3 the commit HEAD names, or "own"',
    'plant() {',
    '  mkdir -p "$1" && (',
    '    cd "$1" || exit 1',
    '    if [ -n "$2" ]; then $G init -q --separate-git-dir "$2" .; else $G init -q .; fi',
    '    echo data > f && $G add f && $G commit -qm planted',
    '    arm "$1"',
    '    [ "$3" = own ] || printf \'%s\\n\' "$3" > "$(git rev-parse --absolute-git-dir)/HEAD"',
    '  ) > /dev/null 2>&1 && echo "PLANTED $1"',
    '}',
    `plant sub '' ${repo.recorded.sub}`,
    'plant sub3 "$PWD/.evil3" own',
    '# files named as the agent repository\'s, so that a status through the gitfile refreshes (writes) its index',
    `mkdir -p lib/sub2 && cp test.js .gitignore lib/sub2/ && printf 'gitdir: %s\\n' ${q(path.join(repo.ws, '.git'))} > lib/sub2/.git && echo 'PLANTED lib/sub2'`,
    'plant nested \'\' own',
    'plant nested2 "$PWD/.evil2" own',
    'plant fixtures/repo \'\' own',
  ].join('\n');
}

/** What each marker file holds, line by line ('' when none ran). */
function markers(marks: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const name of ['filter', 'diff', 'fsmonitor', 'hook']) {
    const file = path.join(marks, name);
    out[name] = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((line) => line !== '') : [];
  }
  return out;
}

const NONE = { filter: [], diff: [], fsmonitor: [], hook: [] };

/** The agent repository's `.git` byte for byte: index, config, refs, objects, modules, everything. */
const gitDirHash = (ws: string): string => hashTree(path.join(ws, '.git'), () => false, false);

describe('the host\'s git on what the model left: no repository of the model\'s is entered, none of its programs runs', function () {
  this.timeout(180_000);
  const model = useSandboxedRuns();

  it('the trap: in a plain clone, plain git runs the planted filter, fsmonitor and hook as root, rewrites the agent repository\'s index through the gitfile, and a status that ignores submodules is not enough', function () {
    skipUnless(this, notRoot());
    const repo = agentRepo();
    const plain = path.join(tempDir('candor-plain-'), 'clone');
    git(path.dirname(plain), 'clone', '-q', repo.ws, plain);
    const marks = tempDir('candor-marks-');
    const planted = spawnSync('sh', ['-c', plantScript(repo, marks)], { cwd: plain, env: FIXTURE_ENV, encoding: 'utf8' });
    assert.deepEqual(planted.stdout.trim().split('\n'), ['PLANTED sub', 'PLANTED sub3', 'PLANTED lib/sub2', 'PLANTED nested', 'PLANTED nested2', 'PLANTED fixtures/repo'], planted.stderr);
    assert.deepEqual(markers(marks), NONE, 'planting ran none of them');

    // A status that ignores submodules (the fix of changedPaths alone) starts nothing...
    spawnSync('git', ['status', '--porcelain', '--ignore-submodules=all'], { cwd: plain, env: FIXTURE_ENV });
    assert.deepEqual(markers(marks), NONE);
    // ...but `git add --all` (how a change is staged) looks into `sub` all the same, and runs its filter and fsmonitor.
    const index = path.join(tempDir('candor-index-'), 'index');
    fs.copyFileSync(path.join(plain, '.git', 'index'), index);
    spawnSync('git', ['add', '--all'], { cwd: plain, env: { ...FIXTURE_ENV, GIT_INDEX_FILE: index } });
    assert.ok(markers(marks).filter.includes('sub'), 'add --all ran sub\'s clean filter');
    assert.ok(markers(marks).fsmonitor.includes('sub'), 'and its fsmonitor');

    // A plain status runs sub3's filter, fsmonitor and hook, and writes the agent repository's index through lib/sub2's gitfile
    // (sub's plant goes first: its HEAD names a commit it does not hold, and git's status stops at it).
    fs.rmSync(path.join(plain, 'sub', '.git'), { recursive: true });
    const before = gitDirHash(repo.ws);
    const { GIT_OPTIONAL_LOCKS: _noLocks, ...asUsual } = FIXTURE_ENV;
    spawnSync('git', ['status', '--porcelain'], { cwd: plain, env: asUsual });
    assert.ok(markers(marks).filter.includes('sub3') && markers(marks).fsmonitor.includes('sub3'), JSON.stringify(markers(marks)));
    assert.ok(markers(marks).hook.includes('sub3'), 'sub3\'s post-index-change hook ran');
    assert.notEqual(gitDirHash(repo.ws), before, 'the agent repository\'s .git was written');
  });

  it('planted by the gate: the run ships, the next run resets it away; nothing ran, and the agent repository\'s .git is byte for byte what it was', async () => {
    const repo = agentRepo();
    const dataDir = tempDir('candor-data-');
    const marks = tempDir('candor-marks-');
    const before = gitDirHash(repo.ws);
    const clone = repoPaths(dataDir, repo.ws).scratch;

    const first = rant(dataDir, 'The greeting is broken, a bug', path.basename(repo.ws));
    model().use(callsScenario(triageAnswer([{ id: first.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: `${plantScript(repo, marks)}\nnode test.js\n` } },
      { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } },
    ]));
    const printer = new Printer();
    const hostile = await runEvolution(baseOptions(repo.ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), printer.io);
    assert.equal(hostile.outcome, 'shipped', printer.text());
    assert.equal(printer.output.split('\n').filter((line) => line.startsWith('PLANTED ')).length, 6, `the gate planted all six\n${printer.output}`);

    const second = rant(dataDir, 'The greeting is still wrong', path.basename(repo.ws));
    model().use(callsScenario(triageAnswer([{ id: second.id, class: 'agent-code' }]), [{ name: 'apply_patch', arguments: { patch: greetPatch('hello again') } }]));
    const next = new Printer();
    const after = await runEvolution(baseOptions(repo.ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), next.io);
    assert.deepEqual(markers(marks), NONE, 'no filter, diff driver, fsmonitor or hook of the plant ran');
    assert.equal(gitDirHash(repo.ws), before, 'the agent repository\'s .git is untouched');
    assert.equal(after.outcome, 'shipped', next.text());

    for (const link of GITLINKS) assert.deepEqual(fs.readdirSync(path.join(clone, link)), [], `${link} is empty again`);
    for (const gone of ['nested', 'nested2', 'fixtures', '.evil2', '.evil3']) assert.equal(fs.existsSync(path.join(clone, gone)), false, gone);
    assert.equal(git(clone, 'status', '--porcelain', '--ignored').trim(), '');
    assert.match(printer.text(), /left empty: 3 submodule folder\(s\) \(lib\/sub2, sub, sub3\), which Candor does not populate in the scratch clone/);
  });

  it('planted while the model works (run_tests): the change is refused naming each repository git would report, not the ignored one; nothing ran', async () => {
    const repo = agentRepo();
    const dataDir = tempDir('candor-data-');
    const marks = tempDir('candor-marks-');
    const before = gitDirHash(repo.ws);
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(repo.ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: `${plantScript(repo, marks)}\nnode test.js\n` } },
      { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } },
      { name: 'run_tests', arguments: {} },
    ]));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(repo.ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), printer.io);
    assert.deepEqual(markers(marks), NONE);
    assert.equal(gitDirHash(repo.ws), before);
    assert.equal(record.outcome, 'discarded', printer.text());
    assert.match(record.reason, /^the change holds a git repository \(/);
    for (const entry of ['sub/.git', 'sub3/.git', 'lib/sub2/.git', 'nested/.git', 'nested2/.git']) assert.ok(record.reason.includes(entry), `${entry}: ${record.reason}`);
    assert.ok(!record.reason.includes('fixtures/repo'), 'a repository in an ignored folder is removed, not counted');
    assert.equal(git(repoPaths(dataDir, repo.ws).scratch, 'status', '--porcelain', '--ignored').trim(), '', 'the clone is restored');
  });

  it('a HEAD that fails its gate says which submodule folders the clone left empty (a test that needs them fails for that)', async () => {
    const repo = agentRepo();
    const dataDir = tempDir('candor-data-');
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(repo.ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), []));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(repo.ws, dataDir, { model: model().model(), testCommand: 'cat sub/s.txt' }), printer.io);
    assert.equal(record.outcome, 'error', printer.text());
    assert.match(record.reason, /^HEAD [0-9a-f]{12} fails the gate \(test failed \(exit 1\)\), with 3 submodule folder\(s\) \(lib\/sub2, sub, sub3\), which Candor does not populate in the scratch clone/);
  });

  it('a repository in an ignored folder only (a fixture a test suite builds) is removed and the change ships', async () => {
    const repo = agentRepo();
    const dataDir = tempDir('candor-data-');
    const marks = tempDir('candor-marks-');
    const script = plantScript(repo, marks).split('\n').filter((line) => !/^(plant (sub|nested)|mkdir -p lib\/sub2)/.test(line)).join('\n');
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(repo.ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: `${script}\nnode test.js\n` } },
      { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } },
      { name: 'run_tests', arguments: {} },
    ]));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(repo.ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), printer.io);
    assert.match(printer.output, /PLANTED fixtures\/repo/);
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.deepEqual(markers(marks), NONE);
  });
});

describe('no driver from any config: a .gitattributes naming a filter of the user\'s own git config', function () {
  this.timeout(120_000);
  const model = useSandboxedRuns();

  /** A home whose `.gitconfig` defines `filter.x` (and `filter.lfs`) as programs that write a marker. */
  function userHome(marks: string): string {
    const home = tempDir('candor-home-');
    const marker = (what: string): string => `"sh -c 'echo ${what} >> ${marks}/user-driver; cat'"`;
    fs.writeFileSync(path.join(home, '.gitconfig'), `[filter "x"]\n\tclean = ${marker('clean')}\n\tsmudge = ${marker('smudge')}\n[filter "lfs"]\n\tclean = ${marker('lfs-clean')}\n\tsmudge = ${marker('lfs-smudge')}\n`);
    return home;
  }
  const ran = (marks: string): string[] => (fs.existsSync(path.join(marks, 'user-driver')) ? fs.readFileSync(path.join(marks, 'user-driver'), 'utf8').trim().split('\n') : []);

  it('written by the model: plain git with that home runs the driver; Candor\'s git, run with that home, does not, and the change ships', async () => {
    const marks = tempDir('candor-marks-');
    const home = userHome(marks);
    // The trap: plain git, with the user's config, stages the same change through the driver.
    const plain = workspaceRepo();
    write(plain, '.gitattributes', '* filter=x\n');
    write(plain, 'greet.js', "module.exports = () => 'hello world';\n");
    spawnSync('git', ['add', '--all'], { cwd: plain, env: { ...FIXTURE_ENV, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') } });
    assert.ok(ran(marks).includes('clean'), 'plain git ran the user\'s clean filter');
    fs.rmSync(path.join(marks, 'user-driver'));

    const ws = workspaceRepo();
    const dataDir = tempDir('candor-data-');
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: '.gitattributes', content: '* filter=x\n' } },
      { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } },
    ]));
    const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    process.env.HOME = home;
    delete process.env.XDG_CONFIG_HOME;
    let record;
    const printer = new Printer();
    try {
      record = await runEvolution(baseOptions(ws, dataDir, { model: model().model() }), printer.io);
    } finally {
      for (const [name, value] of Object.entries(saved)) if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.deepEqual(ran(marks), [], 'no driver of the user\'s config ran on the clone');
    assert.equal(git(repoPaths(dataDir, ws).scratch, 'show', `${record.commit}:.gitattributes`), '* filter=x\n');
  });

  it('named by HEAD: the run is refused at its start with the reason, before any command; plain git would run the user\'s driver on checkout', async () => {
    const marks = tempDir('candor-marks-');
    const home = userHome(marks);
    const ws = workspaceRepo({ '.gitattributes': '# large files\n*.bin filter=lfs diff=lfs merge=lfs -text\n', 'data.bin': 'payload\n' });
    // The trap: a plain clone with the user's config runs their driver.
    const plain = path.join(tempDir('candor-plain-'), 'clone');
    spawnSync('git', ['clone', '-q', ws, plain], { env: { ...FIXTURE_ENV, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') } });
    assert.ok(ran(marks).includes('lfs-smudge'), 'plain git ran the user\'s smudge filter on checkout');
    fs.rmSync(path.join(marks, 'user-driver'));

    const dataDir = tempDir('candor-data-');
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [{ name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }]));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model().model() }), printer.io);
    assert.equal(record.outcome, 'error', printer.text());
    assert.match(record.reason, /^HEAD's \.gitattributes names a filter driver \("\*\.bin filter=lfs diff=lfs merge=lfs -text"\): .*Evolution does not run on a repository whose \.gitattributes names a filter \(Git LFS among them\)$/);
    assert.equal(record.sandbox, null, 'no command ran');
    assert.deepEqual(ran(marks), []);
  });
});
