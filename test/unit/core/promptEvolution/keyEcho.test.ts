import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { runPromptEvolutionCli, type CliOutput } from '../../../../src/cli/promptEvolve';
import { PROPOSER_SYSTEM } from '../../../../src/core/promptEvolution/proposer';
import { PromptRegistry } from '../../../../src/core/promptEvolution/registry';
import { workspaceIdFor } from '../../../../src/core/workspaceId';
import { REDACTED } from '../../../../src/core/redact';
import { patternlessKey, startEchoServer, type EchoServer } from '../provider/echoServer';

const PROMPT = 'You are Candor, a coding assistant.\nKeep answers short.\n';

function tasks(n: number): string {
  return Array.from({ length: n }, (_, i) => JSON.stringify({ id: `t${i + 1}`, input: `in-${i + 1}`, expected: `in-${i + 1}`, scorer: 'exact' })).join('\n');
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

describe('prompt-evolve against a provider that echoes the key (real HTTP)', function () {
  this.timeout(60_000);
  let root: string;
  let workspace: string;
  let dataDir: string;
  let server: EchoServer | undefined;
  let key: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-prompt-key-'));
    workspace = path.join(root, 'ws');
    dataDir = path.join(root, 'data');
    fs.mkdirSync(path.join(workspace, '.candor', 'evals'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.candor', 'evals', 'tasks.jsonl'), tasks(6));
    fs.writeFileSync(path.join(workspace, '.candor', 'prompt.md'), PROMPT);
    key = patternlessKey();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  function filesHoldingKey(): string[] {
    return fs.readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name))
      .filter((file) => fs.readFileSync(file, 'latin1').includes(key));
  }

  it('a proposer that copies the key into its candidate, and A/B requests refused with the key echoed: nothing printed or written holds it', async () => {
    const candidate = `${PROMPT}Use the key ${key} when asked.\n`;
    // The proposer answers (with the key in its candidate); every other request is refused with the key echoed.
    server = await startEchoServer(401, (system) => (system.startsWith(PROPOSER_SYSTEM) ? JSON.stringify([{ prompt: candidate, rationale: `found ${key}` }]) : undefined));

    // The trap: both the proposal and the refusals carry the key as the provider sends them.
    const client = new OpenAI({ baseURL: server.baseUrl, apiKey: key, maxRetries: 0 });
    const proposal = await client.chat.completions.create({ model: 'm', messages: [{ role: 'system', content: PROPOSER_SYSTEM }] });
    assert.ok(proposal.choices[0]?.message.content?.includes(key));
    const refused = await client.chat.completions.create({ model: 'm', messages: [{ role: 'system', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(refused instanceof Error && refused.message.includes(key));

    const io = new Captured();
    await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir, '--base-url', server.baseUrl, '--model', 'm'], io, { ...process.env, OPENAI_API_KEY: key });

    assert.ok(server.seen.length > 2 && server.seen.every((h) => h === `Bearer ${key}`), 'every request carried the key');
    assert.match(io.text, /failed: task t\d+ \(/, io.text);
    assert.ok(io.text.includes(`Incorrect API key provided: ${REDACTED}`), io.text);
    assert.ok(!io.text.includes(key), `printed: ${io.text}`);
    assert.deepEqual(filesHoldingKey(), []);
    assert.equal(fs.readFileSync(path.join(workspace, '.candor', 'prompt.md'), 'utf8'), PROMPT, 'nothing was promoted');
    assert.ok(fs.readFileSync(path.join(dataDir, 'traces.sqlite'), 'latin1').includes(`Use the key ${REDACTED} when asked.`), 'the candidate was recorded, without the key');
  });

  it('a refused proposer: the reason printed keeps the provider\'s words without the key', async () => {
    server = await startEchoServer(401);
    const io = new Captured();
    const code = await runPromptEvolutionCli(['--workspace', workspace, '--data-dir', dataDir, '--base-url', server.baseUrl, '--model', 'm'], io, { ...process.env, OPENAI_API_KEY: key });
    assert.equal(code, 1);
    assert.equal(server.seen[0], `Bearer ${key}`);
    assert.ok(io.text.includes(REDACTED), io.text);
    assert.ok(!io.text.includes(key), io.text);
    assert.deepEqual(filesHoldingKey(), []);
  });

  it('a prompt file that holds the key is registered without it, and stays one version', async () => {
    const withKey = `${PROMPT}My key: ${key}\n`;
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = key; // no secrets given: the environment's key is the default
    try {
      const registry = await PromptRegistry.open({ file: path.join(dataDir, 'traces.sqlite'), scope: workspaceIdFor(workspace) });
      try {
        const first = await registry.ensureCurrent(withKey);
        const second = await registry.ensureCurrent(withKey);
        assert.equal(first.id, second.id, 'the same prompt is the same version');
        assert.equal(first.text, `${PROMPT}My key: ${REDACTED}\n`);
      } finally {
        registry.close();
      }
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
    assert.deepEqual(filesHoldingKey().filter((f) => f.startsWith(dataDir)), []);
  });
});
