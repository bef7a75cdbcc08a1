import assert from 'node:assert/strict';
import { deepseekV3Server, gemma3Server, llama3Server, TOOLS, type CountingProvider } from '../../../../bench/realTextSession';
import { ContextGate } from '../../../../src/core/context/gate';
import { PayloadLedger } from '../../../../src/core/context/ledger';
import { ToolRenderings } from '../../../../src/core/context/toolRendering';
import { FamilyTokenizer } from '../../../../src/core/context/tokenizer/familyTokenizer';
import type { TemplateFamily } from '../../../../src/core/modelIdentity';
import type { ChatMessage } from '../../../../src/core/messages';
import { MemoryDriftSink } from '../../../helpers/core';
import { installedFamilyModules } from '../../../helpers/installedModules';

const SYSTEM = 'You are Candor, a coding agent.\nAnswer briefly.';
/** One tool call a turn (Llama 3.1's template takes no more), results with CJK and white space at either end. */
const SESSION: readonly ChatMessage[] = [
  { role: 'user', content: '  List the files under src/, 请.  ' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{"path":"src"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'a.ts\nb.ts\n\n値.md\n' },
  { role: 'assistant', content: 'Three files.\n\n```ts\nexport {};\n```' },
  { role: 'user', content: 'Read a.ts' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path": "a.ts"}' } }] },
  { role: 'tool', tool_call_id: 'c2', content: '{"json": [1, 2], "text": "\\"quoted\\""}' },
];

describe('gate/the shipped families against their published templates, written apart from Candor\'s (bench/realTextSession.ts)', function () {
  this.timeout(120_000);
  const counters = new Map<TemplateFamily, FamilyTokenizer>();
  after(() => {
    for (const counter of counters.values()) counter.dispose();
  });

  async function candorCount(family: TemplateFamily | undefined, history: readonly ChatMessage[]): Promise<{ ledger: PayloadLedger; tokens: number }> {
    const ledger = new PayloadLedger();
    if (family) {
      if (!counters.has(family)) counters.set(family, new FamilyTokenizer(family, installedFamilyModules()));
      ledger.useCounter(counters.get(family));
    }
    ledger.reset(history, '');
    const tools = new ToolRenderings().of({ provider: '127-0-0-1-8080', model: 'model.gguf' }, TOOLS);
    ledger.measure(SYSTEM, tools);
    await ledger.counted();
    return { ledger, tokens: ledger.measure(SYSTEM, tools).tokens };
  }

  const cases: [TemplateFamily, () => CountingProvider][] = [['llama3', llama3Server], ['deepseek_v3', deepseekV3Server]];
  for (const [family, reference] of cases) {
    it(`${family}: every prefix of a session, tools included, counts what the template and the real tokenizer count`, async () => {
      const server = reference();
      for (let n = 1; n <= SESSION.length; n++) {
        const history = SESSION.slice(0, n);
        assert.equal((await candorCount(family, history)).tokens, await server.count(SYSTEM, TOOLS, history), `${n} messages`);
      }
    });
  }

  it('Gemma 3, a family Candor does not ship: the first request\'s band holds the real count', async () => {
    const history = SESSION.slice(0, 1);
    const { ledger } = await candorCount(undefined, history);
    const identity = { provider: '127-0-0-1-8080', model: 'gemma-3-12b-it' };
    const projection = new ContextGate({ session: 's', sink: new MemoryDriftSink() }).project(identity, ledger.measure(SYSTEM, new ToolRenderings().of(identity, TOOLS)));
    const real = await gemma3Server().count(SYSTEM, TOOLS, history);
    assert.equal(projection.source, 'estimate');
    assert.ok(Math.abs(projection.projected - real) <= projection.band, `${projection.projected} ± ${projection.band} holds ${real}`);
  });
});
