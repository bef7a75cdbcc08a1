import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario } from '../../../../src/core/offline/scenario';
import { diskPromptFile, type PromptFilePort } from '../../../../src/core/prompt/promptFile';
import { PromptRegistry } from '../../../../src/core/promptEvolution/registry';
import { openPromptRegistry, registryFile, runPromptEvolution, type PromptEvolutionPorts } from '../../../../src/core/promptEvolution/run';
import { resolveSettings } from '../../../../src/core/promptEvolution/settings';
import { SecretSet } from '../../../../src/core/redact';
import { runView } from '../../../../src/host/promptEvolution/views';
import { modelAt } from '../provider/models';

const PHRASE = 'Echo the task input verbatim.';
const PROMPT = [
  'You are Candor, a coding assistant inside VS Code.',
  'Be direct and honest: say what you know, what you do not, and what you did.',
  'Use the tools to read the workspace before you answer questions about it.',
  'Keep answers short.',
  '',
].join('\n');
const WITH_PHRASE = `${PROMPT}${PHRASE}\n`;
const TASKS = Array.from({ length: 24 }, (_, i) => JSON.stringify({ id: `t${i + 1}`, input: `answer-t${i + 1}`, expected: `answer-t${i + 1}`, scorer: 'exact' })).join('\n');

interface Printed {
  readonly lines: string[];
  readonly problems: string[];
  readonly progress: Array<[number, number]>;
}

describe('runPromptEvolution: the one run of the VS Code task and the CLI', function () {
  this.timeout(60_000);
  let root: string;
  let workspace: string;
  let dataDir: string;
  let server: OfflineServer;
  let registry: PromptRegistry | undefined;
  let printed: Printed;

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-run-'));
    workspace = path.join(root, 'ws');
    dataDir = path.join(root, 'data');
    fs.mkdirSync(path.join(workspace, '.candor', 'evals'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.candor', 'evals', 'tasks.jsonl'), TASKS);
    fs.writeFileSync(path.join(workspace, '.candor', 'prompt.md'), PROMPT);
    const scenario = parseScenario({
      rules: [
        { match: { system: '^You improve the system prompt' }, respond: { text: JSON.stringify([{ prompt: WITH_PHRASE, rationale: 'echo' }]) } },
        { match: { system: 'Echo the task input verbatim' }, respond: { text: '{{user}}' } },
        { respond: { text: 'no' } },
      ],
    });
    server = await startOfflineServer({ scenario: () => scenario, countTokens: (t) => Math.ceil(t.length / 4) });
    printed = { lines: [], problems: [], progress: [] };
  });
  afterEach(async () => {
    registry?.close();
    registry = undefined;
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  function ports(promptFile: PromptFilePort, more: Partial<PromptEvolutionPorts> = {}): PromptEvolutionPorts {
    const secrets = new SecretSet();
    return {
      workspace,
      dataDir,
      promptFile,
      registry: async () => (registry ??= await openPromptRegistry({ file: registryFile(dataDir), scope: 'ws', secrets }, (m) => printed.problems.push(m))),
      model: async () => modelAt(server.baseUrl, { identity: { provider: 'offline', model: 'candor-offline' } }),
      settings: resolveSettings(),
      output: {
        line: (text = '') => printed.lines.push(text),
        problem: (text) => printed.problems.push(text),
        abProgress: (_text, done, total) => printed.progress.push([done, total]),
      },
      clock: () => new Date('2026-01-02T03:04:05.000Z'),
      secrets,
      signal: new AbortController().signal,
      ...more,
    };
  }

  it('a promotion the prompt file refuses (as VS Code may refuse an edit) is not written and is withdrawn in the registry', async () => {
    const disk = diskPromptFile(workspace);
    const refusing: PromptFilePort = { read: () => disk.read(), write: async () => ({ ok: false, reason: 'VS Code did not apply the edit to .candor/prompt.md' }) };
    const end = await runPromptEvolution(ports(refusing));
    const view = end.decided && runView(end.decided, end.summary);
    assert.equal(end.code, 1);
    assert.match(end.summary, /^Outcome: promote .*Not written: VS Code did not apply the edit to \.candor\/prompt\.md\. The registry records it as withdrawn\.$/);
    assert.deepEqual(printed.problems, [end.summary], 'the summary is the one problem line');
    assert.equal(view?.outcome, 'promote');
    assert.equal(view?.finished, '2026-01-02T03:04:05.000Z');
    assert.equal(fs.readFileSync(path.join(workspace, '.candor', 'prompt.md'), 'utf8'), PROMPT);
    assert.deepEqual((await registry?.versions())?.map((v) => v.kind), ['root', 'promotion', 'rollback']);
    assert.deepEqual(printed.progress[printed.progress.length - 1], [48, 48], 'A/B progress (24 tasks, two arms) goes through its own port');
  });

  it('a promotion written: code 0, the summary says so, the view carries it', async () => {
    const end = await runPromptEvolution(ports(diskPromptFile(workspace)));
    assert.equal(end.code, 0, printed.lines.join('\n'));
    assert.match(end.summary, /Written to \.candor\/prompt\.md and saved\.$/);
    assert.equal(end.decided && runView(end.decided, end.summary).summary, end.summary);
    assert.equal(fs.readFileSync(path.join(workspace, '.candor', 'prompt.md'), 'utf8'), WITH_PHRASE);
  });

  it('a re-test of a candidate that is not in the review queue stops before any request', async () => {
    const end = await runPromptEvolution(ports(diskPromptFile(workspace), { retest: 'c-000000000000' }));
    assert.equal(end.code, 1);
    assert.deepEqual(printed.problems, ['No near-miss c-000000000000 in the review queue.']);
    assert.equal(server.requests.length, 0);
  });

  it('a corrupt traces.sqlite is moved aside, said once, and a fresh registry opened', async () => {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(registryFile(dataDir), 'not a database');
    const opened = await openPromptRegistry({ file: registryFile(dataDir), scope: 'ws', secrets: new SecretSet() }, (m) => printed.problems.push(m));
    try {
      assert.deepEqual(await opened.versions(), []);
      assert.equal(printed.problems.length, 1);
      assert.match(printed.problems[0] ?? '', /is not a readable SQLite database.*moved to/);
      assert.ok(fs.readdirSync(dataDir).some((name) => name.startsWith('traces.sqlite.corrupt-')));
    } finally {
      opened.close();
    }
  });
});
