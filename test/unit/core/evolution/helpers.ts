import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hashFile, hashTree } from '../../../helpers/hashTree';
import { FIXTURE_ENV as GIT_FIXTURE_ENV } from '../../../helpers/fixtureEnv';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import { modelAt } from '../provider/models';
import type { ChatModel } from '../../../../src/core/provider/chatModel';
import type { EvolutionOptions } from '../../../../src/core/evolution/pipeline';
import { detectSandbox, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { noNestedSandbox, skipUnless } from '../../../helpers/preconditions';

import { saveRant, type Rant } from '../../../../src/core/rants';

// Loading a CA bundle costs every `node` a gate starts half a second on these machines; the tests talk to loopback only.
delete process.env.NODE_EXTRA_CA_CERTS;

/** Fixture repositories, built with the real git directly and isolated from the machine's config; no optional locks. */
export const FIXTURE_ENV: NodeJS.ProcessEnv = { ...GIT_FIXTURE_ENV, GIT_OPTIONAL_LOCKS: '0' };

/** Real git on a fixture; `safe.directory=*` because the gate hands the scratch clone's work tree to its own uid. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'core.autocrlf=false', '-c', 'safe.directory=*', ...args], {
    cwd,
    env: FIXTURE_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

const made: string[] = [];

export function tempDir(prefix = 'candor-evo-', parent = os.tmpdir()): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(parent, prefix)));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  // `rm -rf`: a test may leave a tree deeper than Node's fs.rm can remove.
  for (const dir of made.splice(0)) execFileSync('rm', ['-rf', '--one-file-system', '--', dir]);
}

export function write(dir: string, relative: string, content: string): void {
  const file = path.join(dir, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

export const GREET = "module.exports = () => 'hello';\n";
/** Passes while greet() starts with "hello". */
export const TEST_JS = "const assert = require('assert');\nassert.ok(require('./greet')().startsWith('hello'));\nconsole.log('tests ok');\n";

/** A workspace repository with one commit: greet.js and its test. */
export function workspaceRepo(files: Record<string, string> = {}): string {
  const repo = tempDir('candor-ws-');
  git(repo, 'init', '-q', '-b', 'main');
  write(repo, 'greet.js', GREET);
  write(repo, 'test.js', TEST_JS);
  write(repo, '.gitignore', 'debug.log\n');
  for (const [name, content] of Object.entries(files)) write(repo, name, content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return repo;
}

export interface Snapshot {
  readonly files: string;
  readonly index: string;
  readonly stage: string;
  readonly refs: string;
  readonly head: string;
  readonly stash: string;
  readonly reflog: string;
}

/** Everything a run must leave as it was: files (bytes, modes, mtimes), index, refs, stash list, reflogs. */
export function snapshot(repo: string, ignoreRef?: string): Snapshot {
  const gitDir = path.join(repo, '.git');
  const refs = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)')
    .split('\n')
    .filter((line) => ignoreRef === undefined || !line.startsWith(`${ignoreRef} `))
    .join('\n');
  return {
    files: hashTree(repo, (rel) => rel === '.git', true),
    index: hashFile(path.join(gitDir, 'index')),
    stage: git(repo, 'ls-files', '--stage'),
    refs,
    head: fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8'),
    stash: git(repo, 'stash', 'list'),
    reflog: hashTree(path.join(gitDir, 'logs'), (rel) => ignoreRef !== undefined && (rel === ignoreRef || (ignoreRef.startsWith(`${rel}/`) && !['refs', 'refs/heads'].includes(rel))), false),
  };
}

export const countTokens = (text: string): number => Math.ceil(text.length / 4);

/** A real OpenAI-compatible server on loopback whose scenario a test can swap. */
export class ScriptedModel {
  private constructor(
    readonly server: OfflineServer,
    private readonly current: { scenario: Scenario },
  ) {}

  static async start(): Promise<ScriptedModel> {
    const current: { scenario: Scenario } = { scenario: parseScenario({ rules: [{ respond: { text: '' } }] }) };
    const server = await startOfflineServer({ scenario: () => current.scenario, countTokens });
    return new ScriptedModel(server, current);
  }

  use(json: unknown): void {
    this.current.scenario = parseScenario(json);
    this.server.resetCounts();
  }

  model(): ChatModel {
    return modelAt(this.server.baseUrl, { apiKey: 'sk-test-secret-key', identity: { provider: 'offline', model: 'candor-offline' } });
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

export function triageAnswer(entries: Array<{ id: string; class: string; note?: string; answer?: string }>): string {
  return JSON.stringify({ rants: entries.map((e) => ({ id: e.id, class: e.class, note: e.note ?? '', ...(e.answer !== undefined ? { answer: e.answer } : {}) })) });
}

/** A unified diff replacing greet.js's return value. */
export function greetPatch(to: string): string {
  return ['--- a/greet.js', '+++ b/greet.js', '@@ -1 +1 @@', "-module.exports = () => 'hello';", `+module.exports = () => '${to}';`, ''].join('\n');
}

/** The scenario of a whole loop: triage answer, one scripted tool call, then a closing text. */
export function loopScenario(triage: string, call: { name: string; arguments: Record<string, unknown> } | undefined, closing = 'Changed greet to answer the complaint.'): unknown {
  const rules: unknown[] = [{ match: { system: '^You triage' }, respond: { text: triage } }];
  if (call !== undefined) rules.push({ match: { system: 'scratch clone', lastRole: 'user' }, respond: { toolCalls: [call] } });
  rules.push({ match: { lastRole: 'tool' }, respond: { text: closing }, chunkChars: 500 });
  rules.push({ respond: { text: closing }, chunkChars: 500 });
  return { rules };
}

/** The scenario of a loop whose first reply makes several tool calls in order, then closes. */
export function callsScenario(triage: string, calls: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }>, closing = 'Done.'): unknown {
  return {
    rules: [
      { match: { system: '^You triage' }, respond: { text: triage } },
      { match: { system: 'scratch clone', lastRole: 'user' }, respond: { toolCalls: calls } },
      { respond: { text: closing }, chunkChars: 500 },
    ],
  };
}

export function rant(dataDir: string, text: string, project: string, at = new Date()): Rant {
  return saveRant(dataDir, { text, project, session: null }, () => at);
}

/** The options of a run on the agent repository `repository` (a test passes `repository: undefined` in `extra` to leave it unset). */
export function baseOptions(repository: string, dataDir: string, extra: Partial<EvolutionOptions> = {}): EvolutionOptions {
  return {
    repository,
    dataDir,
    testCommand: 'node test.js',
    maxChangedLines: 200,
    maxChangedFiles: 10,
    timeoutMs: 20_000,
    secrets: ['sk-test-secret-key'],
    ...extra,
  };
}

export class Printer {
  readonly lines: string[] = [];
  readonly phases: string[] = [];
  output = '';
  readonly io = {
    print: (line: string): void => {
      this.lines.push(line);
    },
    onPhase: (phase: string): void => {
      this.phases.push(phase);
    },
    onOutput: (chunk: string): void => {
      this.output += chunk;
    },
  };
  text(): string {
    return this.lines.join('\n');
  }
}

/** Alive and not a zombie waiting for a reaper. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/**
 * The sandbox every evolution command runs in. On Linux it must be
 * bubblewrap: a machine without it fails the tests rather than skipping them
 * (CI installs it; `apt-get install bubblewrap`).
 */
export async function requiredSandbox(): Promise<Sandbox> {
  const sandbox = await detectSandbox('required');
  if (sandbox.kind === 'unavailable') throw new Error(`the sandbox tests need bubblewrap: ${sandbox.message}`);
  if (process.platform === 'linux' && sandbox.kind !== 'bubblewrap') throw new Error(`expected bubblewrap on Linux, got ${sandbox.kind}`);
  return sandbox;
}

/**
 * Skips the calling suite where no sandbox can start: inside Candor's own
 * evolution gate (Candor improving Candor, README "Candor improves Candor"),
 * bubblewrap cannot start a sandbox within the sandbox. The detection itself
 * decides, never a marker; a machine without bubblewrap fails the tests
 * rather than skipping them, as requiredSandbox says.
 */
export async function skipUnlessSandbox(ctx: Mocha.Context): Promise<void> {
  skipUnless(ctx, await noNestedSandbox());
}

/** Host processes whose command line contains `needle` (the sandbox's own PID numbers mean nothing out here). */
/**
 * The set-up of a suite of sandboxed evolution runs: skipped, with the
 * probe's reason, where the sandbox cannot run; one scripted model for the
 * suite; the temp folders removed after each test.
 */
export function useSandboxedRuns(): () => ScriptedModel {
  let model: ScriptedModel | undefined;
  before(async function () {
    await skipUnlessSandbox(this);
    model = await ScriptedModel.start();
  });
  after(async () => model?.close());
  afterEach(() => removeTempDirs());
  return () => model ?? assert.fail('the scripted model did not start');
}

export function processesMatching(needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').includes(needle) && running(Number(entry))) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
