/**
 * Small text helpers every part of the core shares: one of each, so that a
 * clipped line, a first line and a JSON object look the same wherever they
 * are made.
 */

/** At most `max` characters: a longer text keeps its first `max - 1` and ends with "…". */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/** "1 time", "3 times", "1,407 tokens": a count with its noun in the number it needs (`many` for an irregular plural). */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}

/** The first line that is not blank, trimmed and clipped to `max` characters. */
export function firstLine(text: string, max: number): string {
  const line = text.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
  return clip(line, max);
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export type JsonShape = 'object' | 'array';

/**
 * Finds JSON of the wanted shape in a model's reply. Models wrap it in prose,
 * in a code fence (with or without a language, with or without a newline
 * after it), or both; the candidates are tried in this order, and the first
 * that parses to the shape wins: the whole reply; each fenced block; each
 * balanced `{…}` or `[…]` span (strings skipped); the reply with every fence
 * marker removed, from the first opening bracket to the last closing one.
 */
export function extractJson(reply: string, shape: JsonShape): unknown {
  const fits = shape === 'array' ? Array.isArray : isRecord;
  for (const candidate of jsonCandidates(reply, shape === 'object' ? '{' : '[')) {
    const value = tryParse(candidate);
    if (value !== undefined && fits(value)) return value;
  }
  return undefined;
}

function* jsonCandidates(reply: string, open: '{' | '['): Generator<string> {
  yield reply.trim();
  for (const match of reply.matchAll(/```[a-zA-Z]*[ \t]*\n?([\s\S]*?)```/g)) yield (match[1] ?? '').trim();
  for (let start = reply.indexOf(open); start >= 0; start = reply.indexOf(open, start + 1)) {
    const end = balancedEnd(reply, start);
    if (end > start) yield reply.slice(start, end + 1);
  }
  const unfenced = reply.replace(/```[a-zA-Z]*/g, '');
  const start = unfenced.indexOf(open);
  const end = unfenced.lastIndexOf(open === '{' ? '}' : ']');
  if (start >= 0 && end > start) yield unfenced.slice(start, end + 1);
}

/** Index of the bracket closing the one at `start`, skipping strings; -1 if none. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** White space folded to single spaces, trimmed, and clipped to `max` characters: a note that fits one line. */
export function oneLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}
