import { diffLines } from 'diff';

/**
 * The three cheap measures the gate runs before any A/B request: frozen
 * sections, changed lines and drift. All pure and deterministic.
 */

const FROZEN_OPEN = '<!-- frozen -->';
const FROZEN_CLOSE = '<!-- /frozen -->';

/**
 * The frozen blocks of a prompt, markers included, after CRLF→LF. A block
 * opened and never closed runs to the end of the text: an unclosed marker
 * freezes more, never less.
 */
export function frozenBlocks(text: string): string[] {
  const normalized = toLf(text);
  const blocks: string[] = [];
  let from = 0;
  while (true) {
    const start = normalized.indexOf(FROZEN_OPEN, from);
    if (start < 0) return blocks;
    const close = normalized.indexOf(FROZEN_CLOSE, start + FROZEN_OPEN.length);
    const end = close < 0 ? normalized.length : close + FROZEN_CLOSE.length;
    blocks.push(normalized.slice(start, end));
    from = end;
  }
}

export type FrozenCheck =
  | { readonly kind: 'ok'; readonly blocks: number }
  /** The candidate has a different number of frozen blocks (one removed, or one added). */
  | { readonly kind: 'count'; readonly expected: number; readonly found: number }
  /** Same blocks, different order. */
  | { readonly kind: 'reordered'; readonly index: number }
  /** Block `index` differs (by as little as one byte). */
  | { readonly kind: 'changed'; readonly index: number };

/** Every frozen block of `current` present in `candidate` byte for byte, same count, same order. */
export function checkFrozen(current: string, candidate: string): FrozenCheck {
  const expected = frozenBlocks(current);
  const found = frozenBlocks(candidate);
  if (expected.length !== found.length) return { kind: 'count', expected: expected.length, found: found.length };
  const index = expected.findIndex((block, i) => block !== found[i]);
  if (index < 0) return { kind: 'ok', blocks: expected.length };
  const sameSet = [...expected].sort().join('\u0000') === [...found].sort().join('\u0000');
  return sameSet ? { kind: 'reordered', index } : { kind: 'changed', index };
}

/**
 * Changed lines from a line diff (trailing CR ignored): each hunk, a run of
 * removed and added lines between unchanged ones, counts max(added, removed),
 * so a modified line counts once.
 */
export function changedLines(current: string, candidate: string): number {
  let total = 0;
  let added = 0;
  let removed = 0;
  for (const change of diffLines(current, candidate, { stripTrailingCr: true })) {
    if (change.added) added += change.count;
    else if (change.removed) removed += change.count;
    else {
      total += Math.max(added, removed);
      added = 0;
      removed = 0;
    }
  }
  return total + Math.max(added, removed);
}

const words = new Intl.Segmenter(undefined, { granularity: 'word' });

/** Word-like segments, lowercased: CJK text is split into words too. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const segment of words.segment(text)) {
    if (segment.isWordLike) out.push(segment.segment.toLowerCase());
  }
  return out;
}

/**
 * TF-IDF cosine distance between two documents (the root original and a
 * candidate): tf = raw count, idf = ln((1+2)/(1+df)) + 1 over the two
 * documents, vectors L2-normalized, drift = 1 − cosine. Two empty texts have
 * drift 0; one empty text against a non-empty one has drift 1.
 */
export function drift(root: string, candidate: string): number {
  const a = termCounts(root);
  const b = termCounts(candidate);
  if (a.size === 0 && b.size === 0) return 0;
  const idf = (term: string): number => Math.log(3 / (1 + (a.has(term) ? 1 : 0) + (b.has(term) ? 1 : 0))) + 1;
  const weigh = (tf: ReadonlyMap<string, number>): Map<string, number> => new Map([...tf].map(([term, n]) => [term, n * idf(term)]));
  const va = weigh(a);
  const vb = weigh(b);
  const normA = norm(va);
  const normB = norm(vb);
  if (normA === 0 || normB === 0) return 1;
  let dot = 0;
  for (const [term, weight] of va) dot += weight * (vb.get(term) ?? 0);
  const cosine = Math.min(1, dot / (normA * normB));
  return Math.max(0, 1 - cosine);
}

/**
 * Segmenting is the slow part of the gate, and the same texts (the root, the
 * current prompt, each candidate) are measured again and again in one run:
 * keep the last few term counts.
 */
const recentCounts = new Map<string, ReadonlyMap<string, number>>();
const RECENT_LIMIT = 32;

function termCounts(text: string): ReadonlyMap<string, number> {
  const known = recentCounts.get(text);
  if (known) return known;
  const fresh = counts(tokens(text));
  if (recentCounts.size >= RECENT_LIMIT) recentCounts.delete(recentCounts.keys().next().value as string);
  recentCounts.set(text, fresh);
  return fresh;
}

function counts(list: readonly string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const item of list) map.set(item, (map.get(item) ?? 0) + 1);
  return map;
}

function norm(vector: Map<string, number>): number {
  let sum = 0;
  for (const weight of vector.values()) sum += weight * weight;
  return Math.sqrt(sum);
}

function toLf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}
