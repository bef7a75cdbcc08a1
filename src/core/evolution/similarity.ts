/** Duplicate detection: token-set Jaccard over normalized text. */

export const DUPLICATE_THRESHOLD = 0.8;

/** Lowercased word tokens, punctuation stripped (letters and digits of any script kept). */
export function tokens(text: string): Set<string> {
  const words = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .split(/\s+/)
    .filter((word) => word !== '');
  return new Set(words);
}

export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}

