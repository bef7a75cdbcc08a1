import { PER_MESSAGE_OVERHEAD } from './messageParts';
import { PRIOR_RATES, TIER_TABLE } from './fittedPrior';

export { PRIOR_RATES };

/**
 * The CJK-aware heuristic: CJK ideographs, kana, hangul and fullwidth forms at
 * 2 characters per token, everything else at 4, rounded up once per text,
 * plus 3 tokens per message. Characters are counted by code point so that an
 * astral ideograph (a surrogate pair) counts once.
 *
 * The same pass measures what the calibration of models with no known
 * tokenizer fits (calibration.ts, docs/architecture.md "Context gate"):
 *
 * - characters per script class (letters beyond ASCII by alphabet: accented
 *   Latin, Greek and Cyrillic, the others), and the runs a tokenizer splits text into
 *   before it merges: words, capitals inside a word (camelCase), digits in
 *   groups of three, runs of punctuation, of indentation, of line breaks,
 *   of ideographs. A BPE tokenizer spends about a token per such piece, so
 *   the pieces tell prose, code and listings apart where characters alone
 *   cannot;
 * - ideographs and hangul syllables by how common they are, as the
 *   vocabularies of open tokenizers tell (vocabularyTier): one a tokenizer
 *   lacks costs it two or three byte tokens instead of one;
 * - per text, its content class (code, JSON, prose, shell listing) and the
 *   prior's estimate of its non-CJK part, filed under that class: what lets
 *   the calibration learn a scale per class, and a new class start from the
 *   scale the others agree on.
 *
 * The prior's rates and the vocabulary table at the end of this file are
 * fitted to real tokenizers by bench/fitRates.ts; the extension ships the
 * numbers, never the tokenizers.
 */

export const FEATURES = [
  'han', 'kana', 'hangul', 'letters', 'digits', 'punctuation', 'spaces', 'newlines', 'messages',
  'words', 'humps', 'digitGroups', 'punctuationRuns', 'indents', 'lineBreaks', 'accented', 'symbols', 'cjkPunctuation', 'hanRuns',
  'hanLessCommon', 'hanRare', 'hangulLessCommon', 'hangulRare', 'boxDrawing', 'greekCyrillic', 'otherScripts',
  'unmeasured',
  'code', 'json', 'prose', 'shell',
] as const;
export type Feature = (typeof FEATURES)[number];
export const FEATURE_COUNT = FEATURES.length;
const featureIndex = (name: Feature): number => FEATURES.indexOf(name);
const HAN = featureIndex('han');
const KANA = featureIndex('kana');
const HANGUL = featureIndex('hangul');
const LETTERS_INDEX = featureIndex('letters');
const DIGITS = featureIndex('digits');
const PUNCTUATION = featureIndex('punctuation');
const SPACES = featureIndex('spaces');
const NEWLINES = featureIndex('newlines');
export const MESSAGES = featureIndex('messages');
const WORDS = featureIndex('words');
const HUMPS = featureIndex('humps');
const DIGIT_GROUPS = featureIndex('digitGroups');
const PUNCTUATION_RUNS = featureIndex('punctuationRuns');
const INDENTS = featureIndex('indents');
const LINE_BREAKS = featureIndex('lineBreaks');
const ACCENTED = featureIndex('accented');
const GREEK_CYRILLIC = featureIndex('greekCyrillic');
const OTHER_SCRIPTS = featureIndex('otherScripts');
const SYMBOLS = featureIndex('symbols');
const CJK_PUNCTUATION = featureIndex('cjkPunctuation');
const HAN_RUNS = featureIndex('hanRuns');
const BOX_DRAWING = featureIndex('boxDrawing');
/** Characters of a message not read yet (a reload still measuring): counted at the heuristic's 4 per token. */
export const UNMEASURED = featureIndex('unmeasured');
/** The content classes; each one's estimate sits in the features from CLASS_OFFSET on, in this order. */
export const CONTENT_CLASSES = ['code', 'json', 'prose', 'shell'] as const;
export type ContentClass = (typeof CONTENT_CLASSES)[number];
export const CLASS_OFFSET = featureIndex('code');
/** Tier 1 and 2 of vocabularyTier, per script. */
const HAN_TIERS = [featureIndex('hanLessCommon'), featureIndex('hanRare')];
const HANGUL_TIERS = [featureIndex('hangulLessCommon'), featureIndex('hangulRare')];
/** What vocabularies differ on most (the tiers, letters of other alphabets): a calibration learns their rates fastest. */
export const VOCABULARY_FEATURES: readonly number[] = [...HAN_TIERS, ...HANGUL_TIERS, GREEK_CYRILLIC, OTHER_SCRIPTS];
/**
 * The features of each CJK script: each script's share of an estimate is
 * scaled on its own, as tokenizers differ most there, and not in the same
 * direction for each (one counts Chinese denser and Korean looser than another).
 */
export const SCRIPT_FEATURES: readonly (readonly number[])[] = [[HAN, CJK_PUNCTUATION, HAN_RUNS, ...HAN_TIERS], [KANA], [HANGUL, ...HANGUL_TIERS]];
const CJK_FEATURES: readonly number[] = SCRIPT_FEATURES.flat();
/** A text with fewer visible characters than this (a role, a tool's name) is filed under no class. */
const MIN_CLASSIFIED = 16;

/** A message's heuristic count and its features. */
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

/** The prior's estimate of what texts' features measure, without the `messages` feature (the frames are the caller's). */
export function priorTokens(features: readonly number[]): number {
  let tokens = 0;
  for (let i = 0; i < CLASS_OFFSET; i++) if (i !== MESSAGES) tokens += (PRIOR_RATES[i] ?? 0) * (features[i] ?? 0);
  return tokens;
}

/** Internal: CJK punctuation breaks a run of ideographs, as tokenizers split there. */
const CJK_MARK = 100;

/** Adds the text's features to `features`; returns its heuristic token count. */
export function measureText(text: string, features: number[]): number {
  // Counted in locals and added once: this runs over every message as it arrives, and over a whole history on reload.
  const own = new Array<number>(CLASS_OFFSET).fill(0);
  // The heuristic's own rule: ideographs, kana and hangul (fullwidth forms among them) at 2, all else at 4.
  let dense = 0;
  let run = -1;
  let runLength = 0;
  let small = false;
  let first = -1;
  let last = -1;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    let kind = code < 0x80 ? (ASCII[code] as number) : classOf(code);
    if (kind === HAN && ((code >= 0x3000 && code <= 0x303f) || (code >= 0xff00 && code <= 0xffef))) kind = CJK_MARK;
    if (kind !== run) {
      endRun(own, run, runLength);
      run = kind;
      runLength = 0;
      small = false;
    }
    runLength++;
    if (kind !== SPACES && kind !== NEWLINES) {
      if (first < 0) first = code;
      last = code;
    }
    switch (kind) {
      case CJK_MARK:
        own[HAN]++;
        own[CJK_PUNCTUATION]++;
        // CJK punctuation sits with the ideographs for the fit, but the heuristic counts it at 4 (fullwidth forms at 2).
        if (code > 0x303f) dense++;
        break;
      case HAN: {
        own[HAN]++;
        dense++;
        const tier = vocabularyTier(code);
        if (tier > 0) own[HAN_TIERS[tier - 1] as number]++;
        break;
      }
      case KANA: own[KANA]++; dense++; break;
      case HANGUL: {
        own[HANGUL]++;
        dense++;
        const tier = vocabularyTier(code);
        if (tier > 0) own[HANGUL_TIERS[tier - 1] as number]++;
        break;
      }
      case LETTERS_INDEX: {
        own[LETTERS_INDEX]++;
        if (code >= 0x80) own[code < 0x250 ? ACCENTED : code >= 0x370 && code < 0x530 ? GREEK_CYRILLIC : OTHER_SCRIPTS]++;
        const isSmall = code >= 0x61 && code <= 0x7a;
        if (small && code >= 0x41 && code <= 0x5a) own[HUMPS]++;
        small = isSmall;
        break;
      }
      case DIGITS: own[DIGITS]++; break;
      case SPACES: own[SPACES]++; break;
      case NEWLINES: own[NEWLINES]++; break;
      default:
        own[PUNCTUATION]++;
        if (code >= 0x2500 && code <= 0x259f) own[BOX_DRAWING]++;
        else if (code >= 0x80) own[SYMBOLS]++;
    }
  }
  endRun(own, run, runLength);
  const visible = (own[HAN] ?? 0) + (own[KANA] ?? 0) + (own[HANGUL] ?? 0) + (own[LETTERS_INDEX] ?? 0) + (own[DIGITS] ?? 0) + (own[PUNCTUATION] ?? 0);
  addText(features, own, visible, first, last);
  const points = visible + (own[SPACES] ?? 0) + (own[NEWLINES] ?? 0);
  return Math.ceil(dense / 2 + (points - dense) / 4);
}

/**
 * Files one text's counts into `features`: its characters and pieces, and
 * the prior's estimate of its non-CJK part under its content class (first
 * and last: its first and last visible code points).
 */
function addText(features: number[], own: readonly number[], visible: number, first: number, last: number): void {
  for (let i = 0; i < CLASS_OFFSET; i++) features[i] = (features[i] ?? 0) + (own[i] ?? 0);
  if (visible < MIN_CLASSIFIED) return;
  const slot = CLASS_OFFSET + CONTENT_CLASSES.indexOf(contentClass(own, visible, first, last));
  features[slot] = (features[slot] ?? 0) + nonCjkEstimate(own);
}

/** What a run adds when it ends: a word, digit groups, a run of punctuation, an indent, a line break, a run of ideographs. */
function endRun(own: number[], kind: number, length: number): void {
  switch (kind) {
    case LETTERS_INDEX: own[WORDS]++; break;
    case DIGITS: own[DIGIT_GROUPS] = (own[DIGIT_GROUPS] ?? 0) + Math.ceil(length / 3); break;
    case PUNCTUATION: own[PUNCTUATION_RUNS]++; break;
    case SPACES: if (length > 1) own[INDENTS]++; break;
    case NEWLINES: own[LINE_BREAKS]++; break;
    case HAN: own[HAN_RUNS]++; break;
    default:
  }
}

/**
 * A text's content class, from what the pass counted: JSON opens and closes
 * with a bracket, or has more runs of punctuation than words (`": "`,
 * `",`); a text mostly in CJK scripts is prose; a listing (`ls -l`,
 * `git log --stat`) is dense in digits; code is indented; the rest reads as
 * prose.
 */
export function contentClass(own: readonly number[], visible: number, first: number, last: number): ContentClass {
  if ((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d)) return 'json';
  // What is not CJK in a CJK text is its prose's numbers, names and marks.
  if ((own[HAN] ?? 0) + (own[KANA] ?? 0) + (own[HANGUL] ?? 0) > 0.3 * visible) return 'prose';
  if ((own[DIGITS] ?? 0) > 0.05 * visible) return 'shell';
  if ((own[PUNCTUATION_RUNS] ?? 0) > 1.3 * (own[WORDS] ?? 0)) return 'json';
  if ((own[INDENTS] ?? 0) > 0.3 * ((own[NEWLINES] ?? 0) + 1)) return 'code';
  return 'prose';
}

/**
 * How common an ideograph or a hangul syllable is, as the vocabularies of two
 * open tokenizers tell (Llama 3: about 2,300 ideographs and 600 syllables of
 * one token each; DeepSeek V3: about 5,200 and 400): 0, one token in both; 1,
 * one token in one of them only; 2, in neither (two or three byte tokens
 * each). Ideographs outside the unified block (extensions, compatibility
 * forms) are 2; jamo are 0.
 */
function vocabularyTier(code: number): number {
  let at: number;
  if (code >= 0x4e00 && code <= 0x9fff) at = code - 0x4e00;
  else if (code >= 0xac00 && code <= 0xd7a3) at = 0x9fff - 0x4e00 + 1 + code - 0xac00;
  else return isHan(code) ? 2 : 0;
  const table = (tiers ??= Buffer.from(TIER_TABLE.join(''), 'base64'));
  return ((table[at >> 2] ?? 0) >> ((at & 3) * 2)) & 3;
}

let tiers: Uint8Array | undefined;

/** The prior's estimate of the non-CJK features of a text. */
function nonCjkEstimate(own: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < CLASS_OFFSET; i++) if (i !== MESSAGES && i !== UNMEASURED && !CJK_FEATURES.includes(i)) sum += (PRIOR_RATES[i] ?? 0) * (own[i] ?? 0);
  return sum;
}

const ASCII: number[] = Array.from({ length: 0x80 }, (_, code) => {
  if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return LETTERS_INDEX;
  if (code >= 0x30 && code <= 0x39) return DIGITS;
  if (code === 0x20 || code === 0x09) return SPACES;
  if (code === 0x0a || code === 0x0d) return NEWLINES;
  return PUNCTUATION;
});

/** The class of a code point at or above 0x80. */
function classOf(code: number): number {
  if (code < 0x1100) return code === 0xa0 ? SPACES : LETTERS_INDEX; // Latin, Greek, Cyrillic, …
  if (isKana(code)) return KANA;
  if (isHangul(code)) return HANGUL;
  // CJK symbols and punctuation sit with the ideographs they punctuate.
  if (isHan(code) || (code >= 0x3000 && code <= 0x303f)) return HAN;
  if (code < 0x2000) return LETTERS_INDEX;
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
