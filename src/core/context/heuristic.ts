import { PER_MESSAGE_OVERHEAD } from './messageParts';

/**
 * The CJK-aware heuristic: CJK ideographs, kana, hangul and fullwidth forms at
 * 2 characters per token, everything else at 4, rounded up once per text,
 * plus 3 tokens per message. Characters are counted by code point so that an
 * astral ideograph (a surrogate pair) counts once.
 *
 * The same pass counts the characters of each class, which is what the
 * calibration of models with no known tokenizer fits (calibration.ts). One
 * rate for "everything else" cannot tell English prose from JSON or code, so
 * that class is split into letters, digits, punctuation, spaces and newlines.
 */

export const FEATURES = ['han', 'kana', 'hangul', 'letters', 'digits', 'punctuation', 'spaces', 'newlines', 'messages'] as const;
export const FEATURE_COUNT = FEATURES.length;
const HAN = 0;
const KANA = 1;
const HANGUL = 2;
export const LETTERS = 3;
const DIGITS = 4;
const PUNCTUATION = 5;
const SPACES = 6;
const NEWLINES = 7;
export const MESSAGES = 8;

/** The heuristic's own rates per feature: where a calibration starts from. */
export const HEURISTIC_RATES: readonly number[] = [0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.25, PER_MESSAGE_OVERHEAD];

/** A message's heuristic count and its characters per class. */
export interface MessageMeasure {
  readonly heuristic: number;
  readonly features: readonly number[];
}

export function zeroFeatures(): number[] {
  return new Array<number>(FEATURE_COUNT).fill(0);
}

/** A message given as the texts a provider tokenizes (messageParts). */
export function measureParts(parts: readonly string[]): MessageMeasure {
  const features = zeroFeatures();
  features[MESSAGES] = 1;
  let heuristic = PER_MESSAGE_OVERHEAD;
  for (const part of parts) heuristic += measureText(part, features);
  return { heuristic, features };
}

export function heuristicTokens(text: string): number {
  return measureText(text, zeroFeatures());
}

/** Adds the text's characters per class to `features`; returns its heuristic token count. */
export function measureText(text: string, features: number[]): number {
  // Counted in locals and added once: this runs over every message as it arrives, and over a whole history on reload.
  let han = 0;
  let kana = 0;
  let hangul = 0;
  let letters = 0;
  let digits = 0;
  let punctuation = 0;
  let spaces = 0;
  let newlines = 0;
  // The heuristic's own rule: ideographs, kana and hangul (fullwidth forms among them) at 2, all else at 4.
  let dense = 0;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    switch (code < 0x80 ? (ASCII[code] as number) : classOf(code)) {
      case HAN:
        han++;
        // CJK punctuation sits with the ideographs for the fit, but the heuristic counts it at 4.
        if (code < 0x3000 || code > 0x303f) dense++;
        break;
      case KANA: kana++; dense++; break;
      case HANGUL: hangul++; dense++; break;
      case LETTERS: letters++; break;
      case DIGITS: digits++; break;
      case SPACES: spaces++; break;
      case NEWLINES: newlines++; break;
      default: punctuation++;
    }
  }
  features[HAN] = (features[HAN] ?? 0) + han;
  features[KANA] = (features[KANA] ?? 0) + kana;
  features[HANGUL] = (features[HANGUL] ?? 0) + hangul;
  features[LETTERS] = (features[LETTERS] ?? 0) + letters;
  features[DIGITS] = (features[DIGITS] ?? 0) + digits;
  features[PUNCTUATION] = (features[PUNCTUATION] ?? 0) + punctuation;
  features[SPACES] = (features[SPACES] ?? 0) + spaces;
  features[NEWLINES] = (features[NEWLINES] ?? 0) + newlines;
  const other = letters + digits + punctuation + spaces + newlines + (han + kana + hangul - dense);
  return Math.ceil(dense / 2 + other / 4);
}

const ASCII: number[] = Array.from({ length: 0x80 }, (_, code) => {
  if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return LETTERS;
  if (code >= 0x30 && code <= 0x39) return DIGITS;
  if (code === 0x20 || code === 0x09) return SPACES;
  if (code === 0x0a || code === 0x0d) return NEWLINES;
  return PUNCTUATION;
});

/** The class of a code point at or above 0x80. */
function classOf(code: number): number {
  if (code < 0x1100) return code === 0xa0 ? SPACES : LETTERS; // Latin, Greek, Cyrillic, …
  if (isKana(code)) return KANA;
  if (isHangul(code)) return HANGUL;
  // CJK symbols and punctuation sit with the ideographs they punctuate.
  if (isHan(code) || (code >= 0x3000 && code <= 0x303f)) return HAN;
  if (code < 0x2000) return LETTERS;
  return PUNCTUATION; // general punctuation, symbols, emoji
}

function isKana(code: number): boolean {
  return (code >= 0x3040 && code <= 0x30ff) || (code >= 0x31f0 && code <= 0x31ff);
}

function isHangul(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x11ff) || // Hangul Jamo
    (code >= 0x3130 && code <= 0x318f) || // Hangul Compatibility Jamo
    (code >= 0xa960 && code <= 0xa97f) || // Hangul Jamo Extended-A
    (code >= 0xac00 && code <= 0xd7ff) // Hangul Syllables, Jamo Extended-B
  );
}

/** CJK ideographs and the halfwidth and fullwidth forms. */
function isHan(code: number): boolean {
  return (
    (code >= 0x3400 && code <= 0x4dbf) || // CJK Extension A
    (code >= 0x4e00 && code <= 0x9fff) || // CJK Unified Ideographs
    (code >= 0xf900 && code <= 0xfaff) || // CJK Compatibility Ideographs
    (code >= 0xff00 && code <= 0xffef) || // Halfwidth and Fullwidth Forms
    (code >= 0x20000 && code <= 0x3ffff) // CJK Extensions B and later
  );
}
