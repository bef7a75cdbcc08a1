import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runPromptEvolutionCli, type CliOutput } from '../../../src/cli/promptEvolve';
import { parseScenario, type Scenario } from '../../../src/core/offline/scenario';
import { startOfflineServer, type OfflineServer } from '../../../src/core/offline/server';
import { BUILT_IN_PROMPT } from '../../../src/core/prompt/systemPrompt';
import { PROPOSER_SYSTEM } from '../../../src/core/promptEvolution/proposer';
import { workspaceIdFor } from '../../../src/core/workspaceId';
import { PromptRegistry } from '../../../src/core/promptEvolution/registry';
import { providerSlug } from '../../../src/core/providerSlug';

const PHRASE = 'Echo the task input verbatim.';
const PROMPT = [
  'You are Candor, a coding assistant inside VS Code.',
  'Be direct and honest: say what you know, what you do not, and what you did.',
  '<!-- frozen -->',
  "Never suggest commands that discard the user's uncommitted work.",
  '<!-- /frozen -->',
  'Use the tools to read the workspace before you answer questions about it.',
  'Keep answers short.',
  '',
].join('\n');
const WITH_PHRASE = PROMPT.replace('Keep answers short.', `Keep answers short.\n${PHRASE}`);
const WITHOUT_FROZEN = PROMPT.replace(/<!-- frozen -->\n.*\n<!-- \/frozen -->\n/, '');

function scenario(): Scenario {
  return parseScenario({
    rules: [
      {
        match: { system: '^You improve the system prompt' },
        respond: { text: JSON.stringify([{ prompt: WITH_PHRASE, rationale: 'echo the input' }, { prompt: WITHOUT_FROZEN, rationale: 'shorter' }]) },
      },
      { match: { system: 'Echo the task input verbatim' }, respond: { text: '{{user}}' } },
      { respond: { text: 'I am not sure.' } },
    ],
  });
}

function tasks(n = 24): string {
  return Array.from({ length: n }, (_, i) => {
    const id = `t${String(i + 1).padStart(2, '0')}`;
    return JSON.stringify({ id, input: `answer-${id}`, expected: `answer-${id}`, scorer: 'exact' });
  }).join('\n');
}

class Captured implements CliOutput {
  readonly lines: string[] = [];
  out(line: string): void {
    this.lines.push(line);
  }
  err(line: string): void {
    this.lines.push(`ERR ${line}`);
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

describe('runPromptEvolutionCli (candor prompt-evolve)', function () {
  this.timeout(60_000);
  let root: string;
  let workspace: string;
  let dataDir: string;
  let server: OfflineServer | undefined;
  const promptFile = (): string => path.join(workspace, '.candor', 'prompt.md');

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-prompt-cli-'));
    workspace = path.join(root, 'ws');
    dataDir = path.join(root, 'data');
    fs.mkdirSync(path.join(workspace, '.candor', 'evals'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.candor', 'evals', 'tasks.jsonl'), tasks());
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('promotes the candidate that adds the phrase, writes .candor/prompt.md, and sends no A/B request for the frozen-block removal', async () => {
    fs.writeFileSync(promptFile(), PROMPT);
    const rules = scenario();
    server = await startOfflineServer({ scenario: () => rules, countTokens: (t) => Math.ceil(t.length / 4) });
    const io = new Captured();
    const code = await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir, '--base-url', server.baseUrl, '--model', 'candor-offline'], io);

    assert.equal(code, 0, io.text);
    assert.equal(fs.readFileSync(promptFile(), 'utf8'), WITH_PHRASE);
    assert.match(io.text, /A\/B test: 48\/48 requests/);
    assert.match(io.text, /✗ frozen_sections +1 mismatched \(must be 0\) — 1 frozen block\(s\) expected, 0 found/);
    assert.match(io.text, /rejected by frozen_sections/);
    assert.match(io.text, /✓ confidence +p = 1\.192e-7 \(< 0\.05\) — exact McNemar, Holm rank 1 of 1/);
    assert.match(io.text, /Outcome: promote c-[0-9a-f]{12} as a new registry version .* \(N=24 b=24 c=0 effect \+1\.000/);
    assert.match(io.text, /Written to \.candor\/prompt\.md and saved\./);
    assert.equal(server.requests.filter((r) => r.system === WITHOUT_FROZEN).length, 0, 'the frozen-block removal never reached the A/B test');
    assert.equal(server.requests.filter((r) => r.system.startsWith(PROPOSER_SYSTEM)).length, 1);

    const registry = await PromptRegistry.open({ file: path.join(dataDir, 'traces.sqlite'), scope: workspaceIdFor(workspace) });
    try {
      const head = await registry.current();
      assert.equal(head?.kind, 'promotion');
      assert.equal(head?.text, WITH_PHRASE);
      assert.deepEqual(head && (await registry.lineage(head.id)).map((v) => v.kind), ['promotion', 'root']);
      assert.equal(head?.lineage?.n, 24);
      assert.equal(head?.lineage?.b, 24);
      // The identity the extension records too: the model and the provider's slug, never the URL.
      assert.equal(head?.lineage?.model, `candor-offline @ ${providerSlug(server.baseUrl)}`);
    } finally {
      registry.close();
    }
    const other = await PromptRegistry.open({ file: path.join(dataDir, 'traces.sqlite'), scope: workspaceIdFor(path.join(root, 'another-workspace')) });
    try {
      assert.deepEqual(await other.versions(), [], 'another workspace sharing the data folder sees none of it');
    } finally {
      other.close();
    }
  });

  it('refuses to write when .candor/prompt.md changed while the run was going, and records the promotion as withdrawn', async () => {
    fs.writeFileSync(promptFile(), PROMPT);
    const rules = scenario();
    let edited = false;
    server = await startOfflineServer({
      scenario: () => {
        // The user edits the prompt while the proposer is being asked.
        if (!edited) fs.writeFileSync(promptFile(), `${PROMPT}A hand edit.\n`);
        edited = true;
        return rules;
      },
      countTokens: (t) => Math.ceil(t.length / 4),
    });
    const io = new Captured();
    const code = await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir, '--base-url', server.baseUrl, '--model', 'm'], io);

    assert.equal(code, 1);
    assert.equal(fs.readFileSync(promptFile(), 'utf8'), `${PROMPT}A hand edit.\n`, 'the hand edit is kept');
    assert.match(io.text, /Not written: \.candor\/prompt\.md changed since the run began/);
    const registry = await PromptRegistry.open({ file: path.join(dataDir, 'traces.sqlite'), scope: workspaceIdFor(workspace) });
    try {
      const versions = await registry.versions();
      assert.deepEqual(versions.map((v) => v.kind), ['root', 'promotion', 'rollback']);
      assert.equal(versions[2]?.text, PROMPT);
    } finally {
      registry.close();
    }
  });

  it('without --base-url starts the offline provider with the given scenario and starts from the built-in prompt', async () => {
    const scenarioFile = path.join(root, 'scenario.json');
    fs.writeFileSync(scenarioFile, JSON.stringify({
      rules: [
        { match: { system: '^You improve the system prompt' }, respond: { text: JSON.stringify([{ prompt: `${BUILT_IN_PROMPT}\n${PHRASE}` }]) } },
        { match: { system: 'Echo the task input verbatim' }, respond: { text: '{{user}}' } },
        { respond: { text: 'no' } },
      ],
    }));
    const io = new Captured();
    const code = await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir, '--scenario', scenarioFile], io);
    assert.equal(code, 0, io.text);
    assert.match(io.text, /Prompt: built in/);
    assert.match(io.text, /Provider: offline demo/);
    assert.equal(fs.readFileSync(promptFile(), 'utf8'), `${BUILT_IN_PROMPT}\n${PHRASE}`);
  });

  it('with no task set says so and what to do next', async () => {
    fs.rmSync(path.join(workspace, '.candor', 'evals'), { recursive: true });
    const io = new Captured();
    const code = await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir], io);
    assert.equal(code, 1);
    assert.match(io.text, /No tasks found/);
    assert.match(io.text, /Next step: add \.candor\/evals\/tasks\.jsonl/);
    assert.equal(fs.existsSync(promptFile()), false, 'nothing is created in the workspace');
  });

  it('bad usage exits 2', async () => {
    const io = new Captured();
    assert.equal(await runPromptEvolutionCli(['--workspace', workspace], io), 2);
    assert.match(io.text, /--data-dir/);
    assert.equal(await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir, '--alpha', '2'], io), 2);
    assert.match(io.text, /candor\.promptEvolution\.alpha/);
  });
});
