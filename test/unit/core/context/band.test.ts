import assert from 'node:assert/strict';
import * as path from 'node:path';
import { SendGate } from '../../../../src/core/chat/sendGate';
import type { Compactor } from '../../../../src/core/chat/compactor';
import { ContextGate } from '../../../../src/core/context/gate';
import { gaugeAccessibilityLabel, gaugeOf, gaugeText, gaugeTooltip, type GaugeState } from '../../../../src/core/context/gauge';
import { PayloadLedger } from '../../../../src/core/context/ledger';
import { FamilyTokenizer } from '../../../../src/core/context/tokenizer/familyTokenizer';
import { silentLogger } from '../../../../src/core/log';
import type { ChatMessage } from '../../../../src/core/messages';
import { SecretSet } from '../../../../src/core/redact';
import { Session } from '../../../../src/core/session/session';
import { MemoryDriftSink } from '../../../helpers/core';
import { installedFamilyModules } from '../../../helpers/installedModules';
import { useTempDir } from './helpers';

const LOCAL = { provider: '127-0-0-1-8080', model: '/models/some-model.gguf' };
const totals = { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0, switches: 0, losses: 0 };

describe('gate/bands: exact or bounded', function () {
  this.timeout(60_000);
  const dir = useTempDir();

  describe('the status bar, its label and its tooltip', () => {
    const base: GaugeState = { projected: 46_500, window: 128_000, thresholdPercent: 80, anchored: false, warning: false, estimate: 46_500 };

    it('an estimate shows ≈, the percentage of the band\'s upper edge, and says plus or minus the half-width rounded up', () => {
      const state: GaugeState = { ...base, source: 'estimate', band: 861 };
      assert.equal(gaugeText(state), '$(pulse) 37% ≈46.5K/128K');
      assert.match(gaugeAccessibilityLabel(state), /, estimated, plus or minus 0\.9K$/);
      assert.match(gaugeTooltip(state), /^Count: ≈46\.5K ±0\.9K \(estimated, plus or minus 0\.9K: between 45\.6K and 47\.4K; compaction is tested against 47\.4K\)$/m);
      // A band of 0.94K is 1K, never 0.9K: the half-width errs wide.
      assert.match(gaugeTooltip({ ...state, band: 940 }), /±1K/);
    });

    it('an exact count shows no ≈ and names where it comes from', () => {
      assert.equal(gaugeText({ ...base, projected: 47_213, source: 'server', band: 0 }), '$(pulse) 37% 47.2K/128K');
      assert.match(gaugeAccessibilityLabel({ ...base, source: 'server', band: 0 }), /, counted by the server$/);
      assert.match(gaugeAccessibilityLabel({ ...base, source: 'tokenizer', band: 0, family: 'Qwen3' }), /, counted with Qwen3's tokenizer$/);
      assert.match(gaugeAccessibilityLabel({ ...base, anchored: true, source: 'anchored', band: 0 }), /, anchored$/);
      assert.match(gaugeTooltip({ ...base, source: 'server', band: 0 }), /^Count: 46\.5K, exact \(counted by the server\)$/m);
    });
  });

  describe("the family's own tokenizer: exact is a claim that is checked", () => {
    let qwen3: FamilyTokenizer;
    before(() => {
      qwen3 = new FamilyTokenizer('qwen3', installedFamilyModules());
    });
    after(() => qwen3.dispose());

    async function measured(history: readonly ChatMessage[]): Promise<PayloadLedger> {
      const ledger = new PayloadLedger();
      ledger.useCounter(qwen3);
      ledger.reset(history, '');
      ledger.measure('You are Candor.', '');
      await ledger.counted();
      return ledger;
    }

    it('is labelled "counted with Qwen3\'s tokenizer" with no band, until a usage differs by one token: then a band, and the drift log says so', async () => {
      const ledger = await measured([{ role: 'user', content: 'hi' }]);
      const sink = new MemoryDriftSink();
      const gate = new ContextGate({ session: 's', sink });
      const first = gate.beforeRequest(LOCAL, ledger.measure('You are Candor.', ''));
      assert.deepEqual([first.source, first.band, first.family], ['tokenizer', 0, 'Qwen3']);
      assert.match(gaugeAccessibilityLabel(gaugeOf(first, { contextWindow: 4096, thresholdPercent: 80 }, totals)), /counted with Qwen3's tokenizer$/);
      // The server agrees: the claim holds, and the next payload is anchored with an exact change.
      gate.afterRequest({ completed: true, promptTokens: first.projected });
      ledger.append({ role: 'assistant', content: 'Hello.' });
      ledger.append({ role: 'user', content: 'and now?' });
      await ledger.counted();
      const second = gate.beforeRequest(LOCAL, ledger.measure('You are Candor.', ''));
      assert.deepEqual([second.source, second.band], ['anchored', 0]);
      assert.equal(sink.events.length, 0);

      // A server whose template adds one token more than the family's: the claim is contradicted.
      gate.afterRequest({ completed: true, promptTokens: second.projected + 1 });
      assert.deepEqual(sink.events.map((e) => e.event), ['count_mismatch']);
      assert.deepEqual(sink.events[0], { event: 'count_mismatch', session: 's', model: LOCAL.model, provider: LOCAL.provider, source: 'tokenizer', counter: 'qwen3', real: second.projected + 1, projected: second.projected, est: second.estNow });
      ledger.append({ role: 'assistant', content: 'Now this.' });
      await ledger.counted();
      const third = gate.project(LOCAL, ledger.measure('You are Candor.', ''));
      assert.equal(third.source, 'anchored');
      assert.ok(third.band >= 2, `a band of at least twice the mismatch (${third.band})`);
    });
  });

  describe('the compaction threshold meets the upper edge, the refusal the lower one', () => {
    /** A session of one long turn and one new message; the gate projects it with the heuristic (a model Candor has no tokenizer of). */
    function rig(window: (projected: number, band: number) => number) {
      const session = Session.create(path.join(dir(), 'sessions'), 'p');
      for (let i = 0; i < 6; i++) {
        session.addMessage(`t${i}`, { role: 'user', content: `question ${i}: ${'the quick brown fox jumps over the lazy dog. '.repeat(40)}` });
        session.addMessage(`t${i}`, { role: 'assistant', content: `answer ${i}: ${'lorem ipsum dolor sit amet, consectetur. '.repeat(40)}` });
      }
      const ledger = new PayloadLedger();
      ledger.reset(session.history(), '');
      const gate = new ContextGate({ session: session.id, sink: new MemoryDriftSink() });
      const projection = gate.project(LOCAL, ledger.measure('You are Candor.', ''));
      const compactions: number[] = [];
      const notices: string[] = [];
      const compactor: Compactor = { compact: async () => { compactions.push(1); return { replaced: 0 }; } } as unknown as Compactor;
      const sendGate = new SendGate({ session, gate, compactor, log: silentLogger, secrets: new SecretSet(), notice: (_t, _l, text) => notices.push(text), persistGate: () => undefined });
      const contextWindow = window(projection.projected, projection.band);
      const check = () => sendGate.check({ turn: 't5', identity: LOCAL, settings: { contextWindow, thresholdPercent: 80, keepTurns: 1 }, signal: new AbortController().signal, measure: () => ledger.measure('You are Candor.', '') });
      // The session writes off the caller's thread: each check waits for its lines to land before the test's folder goes.
      const checked = async () => {
        const result = await check();
        await session.flushed();
        return result;
      };
      return { projection, compactions, notices, check: checked };
    }

    it('an estimate whose middle is under the threshold but whose upper edge is over compacts: early, never late', async () => {
      const { projection, compactions, check } = rig((projected, band) => Math.ceil((projected + band / 2) / 0.8));
      assert.equal(projection.source, 'estimate');
      assert.ok(projection.band > 0);
      await check();
      assert.equal(compactions.length, 1);
    });

    it('a request is refused only when even the lower edge passes the window; the server\'s own overflow is the backstop for the rest', async () => {
      const inside = rig((projected, band) => projected - Math.floor(band / 2));
      assert.equal((await inside.check()).send, true, 'the middle is over the window, the lower edge is not');
      const over = rig((projected, band) => projected - band - 1);
      assert.equal((await over.check()).send, false);
      assert.match(over.notices.find((n) => n.startsWith('Not sent')) ?? '', /^Not sent: this request needs at least [\d,]+ tokens, more than the model's context window/);
    });
  });
});
