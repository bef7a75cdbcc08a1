import type { ChatMessage } from '../messages';
import type { Estimator } from './estimator';
import { messageParts, PER_MESSAGE_OVERHEAD } from './messageParts';

/**
 * The CJK-aware heuristic: CJK ideographs, kana, hangul and fullwidth forms at
 * 2 characters per token, everything else at 4, rounded up once per text.
 * Characters are counted by code point so that an astral ideograph (a
 * surrogate pair) counts once.
 */
export function heuristicEstimator(): Estimator {
  const countText = heuristicTokens;
  return {
    name: 'heuristic',
    countText,
    countMessage(message: ChatMessage): number {
      let total = PER_MESSAGE_OVERHEAD;
      for (const part of messageParts(message)) total += countText(part);
      return total;
    },
  };
}

export function heuristicTokens(text: string): number {
  let dense = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (isDense(code)) dense++;
    else other++;
  }
  return Math.ceil(dense / 2 + other / 4);
}

/** The scripts a BPE tokenizer splits into about one token per 1–2 characters. */
function isDense(code: number): boolean {
  if (code < 0x1100) return false; // fast path: Latin, Cyrillic, Greek, code
  return (
    (code >= 0x1100 && code <= 0x11ff) || // Hangul Jamo
    (code >= 0x3040 && code <= 0x30ff) || // Hiragana, Katakana
    (code >= 0x3130 && code <= 0x318f) || // Hangul Compatibility Jamo
    (code >= 0x31f0 && code <= 0x31ff) || // Katakana Phonetic Extensions
    (code >= 0x3400 && code <= 0x4dbf) || // CJK Extension A
    (code >= 0x4e00 && code <= 0x9fff) || // CJK Unified Ideographs
    (code >= 0xa960 && code <= 0xa97f) || // Hangul Jamo Extended-A
    (code >= 0xac00 && code <= 0xd7ff) || // Hangul Syllables, Jamo Extended-B
    (code >= 0xf900 && code <= 0xfaff) || // CJK Compatibility Ideographs
    (code >= 0xff00 && code <= 0xffef) || // Halfwidth and Fullwidth Forms
    (code >= 0x20000 && code <= 0x3ffff) // CJK Extensions B and later
  );
}
