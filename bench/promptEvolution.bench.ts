/**
 * Prompt evolution, one round: 40 tasks × 4 candidates against the offline
 * provider with a fixed latency per request. Prints the A/B wall time with
 * `concurrency` 4 against one request at a time, as a ratio, and the gate's
 * own time (cheap checks + statistics) beside the A/B time.
 *
 *   npx tsx bench/promptEvolution.bench.ts
 */
import { startOfflineServer } from '../src/core/offline/server';
import { parseScenario } from '../src/core/offline/scenario';
import { DEFAULT_POLICY } from '../src/core/provider/chatModel';
import { createClient, openAiChatModel } from '../src/core/provider/openaiModel';
import { runAbTest } from '../src/core/promptEvolution/abTest';
import { cheapChecks, evaluateCandidates } from '../src/core/promptEvolution/promotionGate';
import { candidateId } from '../src/core/promptEvolution/proposer';
import { parseTaskSets } from '../src/core/promptEvolution/taskSet';

const TASKS = 40;
const CANDIDATES = 4;
const HOLD_MS = 20;

const PROMPT = [
  'You are Candor, a coding assistant.',
  '<!-- frozen -->',
  'Never run git commands that write.',
  '<!-- /frozen -->',
  'Answer briefly and show the code you change.',
  'Prefer small, tested steps.',
  'Use the workspace language.',
  '',
].join('\n');

export interface BenchRow {
  readonly concurrency: number;
  readonly requests: number;
  readonly abMs: number;
  readonly gateMs: number;
  readonly outcome: string;
}

export interface BenchResult {
  readonly rows: readonly BenchRow[];
  /** A/B wall time at concurrency 1 divided by the time at concurrency 4. */
  readonly speedup: number;
}

export async function run(print: (line: string) => void = console.log): Promise<BenchResult> {
  const scenario = parseScenario({
    rules: [
      { match: { system: 'Always cite the file path' }, respond: { text: 'PASS' }, holdMs: HOLD_MS },
      { respond: { text: 'FAIL' }, holdMs: HOLD_MS },
    ],
  });
  const server = await startOfflineServer({ scenario: () => scenario, countTokens: (t) => Math.ceil(t.length / 4) });
  try {
    const model = openAiChatModel(createClient(server.baseUrl, 'bench'), { provider: 'offline', model: 'candor-offline' }, DEFAULT_POLICY);
    const taskSet = parseTaskSets([{ file: 'bench.jsonl', text: Array.from({ length: TASKS }, (_, i) => JSON.stringify({ id: `t${i}`, input: `Task ${i}`, expected: 'PASS', scorer: 'exact' })).join('\n') }]);
    const texts = ['Always cite the file path.', 'Be terse.', 'Explain each step.', 'Ask before large edits.'].slice(0, CANDIDATES).map((line) => PROMPT.replace('Use the workspace language.', `Use the workspace language.\n${line}`));
    const candidates = texts.map((text) => ({ id: candidateId(text), text }));

    await runAbTest({ model, tasks: taskSet.tasks.slice(0, 2), baseline: PROMPT, candidates: candidates.slice(0, 1) }); // warm-up: connections, JIT
    const rows: BenchRow[] = [];
    for (const concurrency of [1, 4]) {
      const before = server.requests.length;
      const abStart = performance.now();
      const ab = await runAbTest({ model, tasks: taskSet.tasks, baseline: PROMPT, candidates, concurrency });
      const abMs = performance.now() - abStart;
      if (ab.kind !== 'done') throw new Error('the A/B test did not finish');

      const gateStart = performance.now();
      for (const c of candidates) cheapChecks(PROMPT, PROMPT, c.text);
      const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: candidates.map((c) => ({ ...c, pairs: ab.pairs.get(c.id) })) });
      const gateMs = performance.now() - gateStart;
      rows.push({ concurrency, requests: server.requests.length - before, abMs, gateMs, outcome: decision.outcome });
    }
    const [serial, parallel] = rows as [BenchRow, BenchRow];
    const speedup = serial.abMs / parallel.abMs;
    print(`prompt evolution round: ${TASKS} tasks × ${CANDIDATES} candidates + baseline, offline provider holdMs ${HOLD_MS}`);
    for (const row of rows) {
      print(`  concurrency ${row.concurrency}: ${row.requests} requests, A/B ${row.abMs.toFixed(0)} ms, gate ${row.gateMs.toFixed(2)} ms (${((row.gateMs / row.abMs) * 100).toFixed(3)}% of A/B), outcome ${row.outcome}`);
    }
    print(`  A/B wall time, concurrency 1 / concurrency 4: ${speedup.toFixed(2)}×`);
    return { rows, speedup };
  } finally {
    await server.close();
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
