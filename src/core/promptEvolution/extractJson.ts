/**
 * Finds JSON in a model's reply: the whole reply, then each fenced code block,
 * then each balanced {…} or […] span, in that order. Returns the first value
 * of the wanted shape, or undefined.
 */
export function extractJson(reply: string, shape: 'object' | 'array'): unknown {
  for (const candidate of jsonCandidates(reply, shape === 'object' ? '{' : '[')) {
    const value = tryParse(candidate);
    if (value === undefined) continue;
    if (shape === 'array' ? Array.isArray(value) : isPlainObject(value)) return value;
  }
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function* jsonCandidates(reply: string, open: '{' | '['): Generator<string> {
  yield reply.trim();
  for (const match of reply.matchAll(/```[a-zA-Z]*\s*\n([\s\S]*?)```/g)) yield (match[1] ?? '').trim();
  for (let start = reply.indexOf(open); start >= 0; start = reply.indexOf(open, start + 1)) {
    const end = balancedEnd(reply, start);
    if (end > start) yield reply.slice(start, end + 1);
  }
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
