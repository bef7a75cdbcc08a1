import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PromptRegistry, type Trace } from '../../../../src/core/promptEvolution/registry';
import { BoundedQueue, RegistryWriter } from '../../../../src/core/promptEvolution/registryWriter';
import { SecretSet } from '../../../../src/core/redact';

const trace = (session: string): Trace => ({ session, replyId: `r-${session}`, model: 'm', provider: 'offline', toolCalls: 0, durationMs: 1 });

describe("RegistryWriter's queue", () => {
  let dir: string;
  let registry: PromptRegistry;
  let warnings: string[];
  const key = 'sk-writer-test-0123456789abcdef';

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-writer-'));
    const secrets = new SecretSet();
    secrets.add(key);
    registry = await PromptRegistry.open({ file: path.join(dir, 'traces.sqlite'), scope: 'ws', secrets });
    warnings = [];
  });
  afterEach(() => {
    registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const writer = (options: { maxQueue?: number; open?: () => Promise<PromptRegistry> } = {}): RegistryWriter =>
    new RegistryWriter({ registry: options.open ?? (async () => registry), warn: (line) => warnings.push(line), batchDelayMs: 20, ...(options.maxQueue ? { maxQueue: options.maxQueue } : {}) });

  it('a bounded FIFO: full, it drops the oldest and says so', () => {
    const queue = new BoundedQueue<number>(3);
    assert.deepEqual([1, 2, 3].map((n) => queue.push(n)), [false, false, false]);
    assert.equal(queue.push(4), true);
    assert.equal(queue.dropped, 1);
    assert.deepEqual(queue.takeAll(), [2, 3, 4]);
    assert.equal(queue.length, 0);
  });

  it('traces and signals pushed without waiting are written in one batch, in order', async () => {
    const w = writer();
    w.push({ kind: 'trace', trace: trace('a') });
    w.push({ kind: 'signal', signal: { kind: 'down', replyId: 'r-a', session: 'a' } });
    w.push({ kind: 'trace', trace: trace('b') });
    assert.equal((await registry.traces()).length, 0, 'nothing is written while the chat goes on');
    await w.flushed();
    assert.deepEqual((await registry.traces()).map((t) => t.session), ['a', 'b']);
    assert.deepEqual((await registry.signals()).map((s) => s.kind), ['down']);
    assert.deepEqual(warnings, []);
  });

  it('each trace is tagged with the newest registry version of the prompt it was built from; an unknown prompt gets no tag', async () => {
    const v1 = await registry.ensureCurrent('Prompt one.');
    const v2 = await registry.ensureCurrent(`Prompt two, with ${key} in it.`);
    const w = writer();
    w.push({ kind: 'trace', trace: trace('one'), prompt: 'Prompt one.' });
    w.push({ kind: 'trace', trace: trace('two'), prompt: `Prompt two, with ${key} in it.` });
    w.push({ kind: 'trace', trace: trace('edited'), prompt: 'A prompt edited by hand since.' });
    await w.flushed();
    const stored = new Map((await registry.traces()).map((t) => [t.session, t.promptVersion]));
    assert.equal(stored.get('one'), v1.id);
    assert.equal(stored.get('two'), v2.id, 'a prompt holding a key is matched as stored, redacted');
    assert.equal(stored.get('edited'), undefined);

    // A rollback to the first text: the newest version with it is the rollback.
    const back = await registry.rollback(v1.id);
    w.push({ kind: 'trace', trace: trace('after'), prompt: 'Prompt one.' });
    await w.flushed();
    assert.equal((await registry.traces('after'))[0]?.promptVersion, back.id);
  });

  it('more records than the queue holds before a batch goes out: the oldest are dropped, with one warning', async () => {
    const w = writer({ maxQueue: 3 });
    for (const s of ['1', '2', '3', '4', '5']) w.push({ kind: 'trace', trace: trace(s) });
    await w.flushed();
    assert.deepEqual((await registry.traces()).map((t) => t.session), ['3', '4', '5']);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /write queue is full/);
  });

  it('a batch that cannot be written is logged and dropped; the next one is written', async () => {
    // A data folder that is a file: opening the registry there fails for real.
    const blocked = path.join(dir, 'blocked');
    fs.writeFileSync(blocked, 'not a folder');
    let opens = 0;
    const w = writer({ open: () => (opens++ === 0 ? PromptRegistry.open({ file: path.join(blocked, 'traces.sqlite'), scope: 'ws' }) : Promise.resolve(registry)) });
    w.push({ kind: 'trace', trace: trace('lost') });
    await w.flushed();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /1 record\(s\) not written/);
    w.push({ kind: 'trace', trace: trace('kept') });
    await w.flushed();
    assert.deepEqual((await registry.traces()).map((t) => t.session), ['kept']);
  });
});
