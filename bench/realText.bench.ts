/**
 * Candor's estimator for each model over sessions built from real text,
 * against real tokenizers: for Llama 3, its count through cl100k
 * (tokenizer/llama3.ts); for DeepSeek V3, which has no known tokenizer, the
 * calibrated heuristic. Not a test: it prints errors measured side by side
 * in one run.
 *
 * Sessions: 5 seeds × 2 mixes (everyday; CJK-heavy) × 300 requests, from
 * the benchmark's half of the material (bench/realTextMaterial.ts; the prior
 * is fitted on the other half by bench/fitRates.ts). Ground truth: Llama 3
 * and DeepSeek V3, each with its real tokenizer and chat template. Every
 * request reports its usage, so each projection is anchored on the request
 * before it, as in a session where nothing goes wrong; the exact counts of a
 * request's messages have landed before it is sent, as they do while the
 * model writes its reply.
 *
 * Per seed × tokenizer × mix: the worst and the mean |projected − real| / real
 * from request 10 on, the worst past 10K tokens, the p99 (from request 10
 * on); beside it Kilo's method (the last usage + 1.3 × the heuristic's
 * estimate of what was added); and the first request, before any anchor,
 * against the plain heuristic's estimate of it. A model with a tokenizer is
 * also measured the moment a request's new messages are appended, before
 * the worker's counts land (the request after a tool's result goes out at
 * once): the fitted prior stands in for them then.
 * The calibration's prior and the Llama 3 rates are fitted on the other half
 * of the material (bench/fitRates.ts), never on the text scored here.
 * Goals: worst < 1% from request 10 on; worst < 0.5% past 10K; p99 < 0.5%;
 * never a larger worst than Kilo's. After the table, the floor of
 * bench/estimatorFloor.ts: the same figures for DeepSeek V3 from an oracle
 * that knows each content class's best rate in hindsight, to tell what the
 * calibration misses from what one document's own spread about its class is.
 *
 * Run: `npx tsx bench/realText.bench.ts` (or `npm run bench -- realText`).
 * Chinese prose comes from Debian's fortunes-zh: `apt-get install -y fortunes-zh`.
 */
import { createHash } from 'node:crypto';
import type { TokenCounter } from '../src/core/context/estimator';
import { ContextGate } from '../src/core/context/gate';
import { PayloadLedger } from '../src/core/context/ledger';
import { ToolRenderings } from '../src/core/context/toolRendering';
import type { ChatMessage } from '../src/core/messages';
import { Estimators } from '../src/host/context/estimators';
import { installedTokenizerModules } from '../test/helpers/installedModules';
import { estimatorFloor } from './estimatorFloor';
import { describe, FORTUNES, loadMaterial, type Material } from './realTextMaterial';
import { buildSession, deepseekV3Server, llama3Server, type CountingProvider, type Mix, type RealSession } from './realTextSession';

const SEEDS = [1, 2, 3, 4, 5];
const MIXES: readonly Mix[] = ['everyday', 'cjk-heavy'];
const REQUESTS = 300;
/** "From request 10 on": the tenth request has index 9. */
const FROM = 9;

export interface Errors {
  /** Per request, |projected − real| / real, and the real count. */
  readonly candor: number[];
  /** The same, projected the moment the request's new messages were appended, before their exact counts landed. */
  readonly early: number[];
  readonly kilo: number[];
  readonly real: number[];
}

/** One session through the ledger and the gate, as the chat loop sends it; `counter` is the model's tokenizer, if it has one. */
export async function replay(session: RealSession, provider: CountingProvider, counter?: TokenCounter): Promise<Errors> {
  const ledger = new PayloadLedger();
  ledger.useCounter(counter);
  // Kilo's method and the first request's comparison read the plain heuristic, whatever counts the model.
  const plain = new PayloadLedger();
  const gate = new ContextGate({ session: 'bench', sink: { record: () => undefined } });
  const identity = { provider: '127-0-0-1-8080', model: provider.model };
  // The tool list as the chat loop renders it for this provider's family.
  const tools = new ToolRenderings().of(identity, session.tools);
  const history: ChatMessage[] = [];
  const errors: Errors = { candor: [], early: [], kilo: [], real: [] };
  let previous: { real: number; tokens: number } | undefined;
  for (const step of session.steps) {
    for (const message of step) {
      history.push(message);
      ledger.append(message);
      plain.append(message);
    }
    // A request sent at once (a tool's result goes straight back) is projected before the tokenizer has counted it.
    const early = gate.project(identity, ledger.measure(session.system, tools)).projected;
    await ledger.counted();
    const measure = ledger.measure(session.system, tools);
    const projection = gate.beforeRequest(identity, measure);
    const real = provider.count(session.system, session.tools, history);
    gate.afterRequest({ completed: true, promptTokens: real });
    const err = (guess: number): number => Math.abs(guess - real) / real;
    const heuristic = plain.measure(session.system, tools).tokens;
    errors.candor.push(err(projection.projected));
    errors.early.push(err(early));
    errors.kilo.push(previous ? err(previous.real + 1.3 * (heuristic - previous.tokens)) : err(heuristic));
    errors.real.push(real);
    previous = { real, tokens: heuristic };
  }
  return errors;
}

export interface Row {
  readonly seed: number;
  readonly mix: Mix;
  readonly tokenizer: string;
  readonly worst: number;
  readonly mean: number;
  readonly worst10k: number;
  readonly p99: number;
  readonly kiloWorst: number;
  readonly kiloMean: number;
  /** The first request, before any anchor: Candor's estimate against the plain heuristic's. */
  readonly first: number;
  readonly firstHeuristic: number;
  /** Projected before the new messages' exact counts landed: the worst from request 10 on, and the p99. */
  readonly earlyWorst: number;
  readonly earlyP99: number;
  /** The request of the worst error, and the count then. */
  readonly worstAt: number;
  readonly realAt: number;
}

export function summarize(seed: number, mix: Mix, tokenizer: string, errors: Errors): Row {
  const from = errors.candor.slice(FROM);
  const sorted = [...from].sort((a, b) => a - b);
  const worst = sorted.at(-1) ?? 0;
  const past10k = errors.candor.filter((_, i) => (errors.real[i] ?? 0) >= 10_000);
  const kilo = errors.kilo.slice(FROM);
  const early = errors.early.slice(FROM).sort((a, b) => a - b);
  const at = errors.candor.indexOf(worst, FROM);
  return {
    seed,
    mix,
    tokenizer,
    worst,
    mean: from.reduce((a, b) => a + b, 0) / from.length,
    worst10k: Math.max(0, ...past10k),
    p99: percentile99(sorted),
    kiloWorst: Math.max(...kilo),
    kiloMean: kilo.reduce((a, b) => a + b, 0) / kilo.length,
    first: errors.candor[0] ?? 0,
    firstHeuristic: errors.kilo[0] ?? 0,
    earlyWorst: early.at(-1) ?? 0,
    earlyP99: percentile99(early),
    worstAt: at + 1,
    realAt: errors.real[at] ?? 0,
  };
}

const pct = (value: number): string => `${(value * 100).toFixed(2)}%`;

function percentile99(sorted: readonly number[]): number {
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}

function sessionHash(sessions: readonly RealSession[]): string {
  const hash = createHash('sha256');
  for (const session of sessions) hash.update(JSON.stringify(session));
  return hash.digest('hex').slice(0, 16);
}

function cjkShare(session: RealSession): number {
  let cjk = 0;
  let all = 0;
  for (const text of [session.system, ...session.steps.flat().map((m) => JSON.stringify(m))]) {
    all += text.length;
    cjk += (text.match(/[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7ff\uff00-\uffef]/g) ?? []).length;
  }
  return cjk / all;
}

export function printTable(rows: readonly Row[]): void {
  const head = ['mix', 'tokenizer', 'seed', 'worst≥10', 'mean≥10', 'worst>10K', 'p99', 'Kilo worst', 'Kilo mean', 'first', 'heuristic', 'worst at'];
  const widths = [11, 13, 6, 10, 10, 11, 8, 12, 11, 8, 11, 16];
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 8) : c.padStart(widths[i] ?? 8))).join('');
  console.log(line(head));
  for (const r of rows) {
    console.log(line([r.mix, r.tokenizer, String(r.seed), pct(r.worst), pct(r.mean), pct(r.worst10k), pct(r.p99), pct(r.kiloWorst), pct(r.kiloMean), pct(r.first), pct(r.firstHeuristic), `#${r.worstAt} @${(r.realAt / 1000).toFixed(1)}K`]));
  }
  const tokenizers = [...new Set(rows.map((r) => r.tokenizer))];
  for (const [mix, tokenizer] of MIXES.flatMap((mix) => [...tokenizers.map((t) => [mix, t] as const), [mix, undefined] as const])) {
    const of = rows.filter((r) => r.mix === mix && (tokenizer === undefined || r.tokenizer === tokenizer));
    if (of.length === 0) continue;
    const max = (pick: (r: Row) => number): string => pct(Math.max(...of.map(pick)));
    const beaten = of.filter((r) => r.worst > r.kiloWorst).length;
    console.log(
      `${mix}${tokenizer ? `, ${tokenizer}` : ''}: first request ${max((r) => r.first)} (the plain heuristic ${max((r) => r.firstHeuristic)}), worst≥10 ${max((r) => r.worst)} (goal < 1%), worst>10K ${max((r) => r.worst10k)} (< 0.5%), p99 ${max((r) => r.p99)} (< 0.5%), ` +
        `worse than Kilo in ${beaten} of ${of.length} pairs (goal 0); projected before the new messages' counts landed: worst≥10 ${max((r) => r.earlyWorst)}, p99 ${max((r) => r.earlyP99)}`,
    );
  }
}

/** `--tune`: the same sessions from the half the prior is fitted on, for choosing the calibration's constants without looking at the benchmark's half. */
export async function run(args: readonly string[] = process.argv.slice(2)): Promise<void> {
  const half = args.includes('--tune') ? 'fit' : 'bench';
  const seeds = half === 'fit' ? SEEDS.map((seed) => seed + 100) : SEEDS;
  const material: Material = loadMaterial();
  console.log('real-text estimator benchmark: each model\'s estimator, anchored on the request before, against real tokenizers\n');
  console.log(`material ${material.hash} (${material.docs.length} documents)`);
  for (const line of describe(material)) console.log(`  ${line}`);
  if (material.missing.length > 0) {
    console.log('  missing, figures are not comparable with a full run:');
    for (const line of material.missing) console.log(`    ${line}`);
  }
  if (material.missing.some((line) => line.startsWith(FORTUNES))) {
    console.log(`  No Chinese prose: install Debian's fortunes-zh (apt-get install -y fortunes-zh) for the CJK-heavy mix.`);
  }
  const providers = [llama3Server(), deepseekV3Server()];
  const estimators = new Estimators(installedTokenizerModules());
  const rows: Row[] = [];
  const sessions: RealSession[] = [];
  // The counts of the provider with no tokenizer of Candor's, per session: what the floor below is measured against.
  const heuristicCounts = new Map<RealSession, readonly number[]>();
  try {
    for (const provider of providers) console.log(`${provider.name} (${provider.model}): ${estimators.counterFor(provider.model)?.name ?? 'the calibrated heuristic'}`);
    for (const mix of MIXES) {
      for (const seed of seeds) {
        const session = buildSession(material, seed, mix, REQUESTS, half);
        sessions.push(session);
        for (const provider of providers) {
          const counter = estimators.counterFor(provider.model);
          const errors = await replay(session, provider, counter);
          if (counter === undefined) heuristicCounts.set(session, errors.real);
          rows.push(summarize(seed, mix, provider.name, errors));
        }
      }
    }
  } finally {
    estimators.dispose();
  }
  const shares = MIXES.map((mix) => `${mix} ${pct(sessions.filter((_, i) => MIXES[Math.floor(i / SEEDS.length)] === mix).reduce((n, s) => n + cjkShare(s), 0) / SEEDS.length)} CJK characters`);
  console.log(`sessions ${sessionHash(sessions)}: the ${half} half, seeds ${seeds.join(', ')} × ${REQUESTS} requests; ${shares.join(', ')}\n`);
  printTable(rows);
  printFloor(sessions, heuristicCounts);
}

/** The floor of estimatorFloor.ts beside the calibrated heuristic's figures (DeepSeek V3). */
function printFloor(sessions: readonly RealSession[], counts: ReadonlyMap<RealSession, readonly number[]>): void {
  const byMix = new Map(MIXES.map((mix, m) => [mix, sessions.slice(m * SEEDS.length, (m + 1) * SEEDS.length)] as const));
  console.log("\nthe floor for a model with no tokenizer of Candor's (DeepSeek V3): one rate per content class known in hindsight, the template exact, anchored on the request before");
  for (const row of estimatorFloor(byMix, (session) => counts.get(session) ?? [], FROM)) {
    const base = row.base === 'prior' ? "on the heuristic's features" : 'on o200k counts';
    console.log(`  ${row.mix.padEnd(10)} ${base.padEnd(28)} worst≥10 ${pct(row.worst)}   worst>10K ${pct(row.worst10k)}   p99 ${pct(row.p99)}`);
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
