/**
 * Text from the model shown so that nothing in it hides: a command the user
 * is asked to run, the folder it runs in, an MCP call's arguments, a diff.
 * Control characters would break a line or move the cursor, and zero-width,
 * bidi and other format characters would make what is shown differ from
 * what runs (a "Trojan Source" reordering, a space that is not one). Each
 * becomes a visible mark; letters of every script and emoji stay as they are.
 *
 * Pure: no DOM, so that it runs in plain Node as well as in the webview.
 */

/** `plain`: shown as it is; `control`: a C0/C1 control or DEL; `hidden`: an invisible or look-alike character. */
export type VisibleKind = 'plain' | 'control' | 'hidden';

export interface VisiblePart {
  readonly kind: VisibleKind;
  /** What to show: the text itself, or the mark that stands for one character. */
  readonly text: string;
  /** The character a mark stands for (absent on plain parts). */
  readonly code?: number;
}

export interface VisibleOptions {
  /**
   * Output and diffs: a line feed, a tab and a carriage return before a line
   * feed are layout, kept as they are. Without it (a command, a path, a
   * label) every control character shows.
   */
  readonly keepLayout?: boolean;
}

/** Accessible names quote a command or a path up to this many characters. */
export const LABEL_CHARS = 80;

const ZWJ = 0x200d;
const WAVING_BLACK_FLAG = 0x1f3f4;
const CANCEL_TAG = 0xe007f;

/**
 * Characters that show nothing or look like an ordinary space: format
 * characters (zero-width, bidi controls, tags, the BOM, soft hyphen),
 * separators other than the space, Hangul fillers, the blank Braille cell,
 * the combining grapheme joiner, and variation selectors other than the two
 * that choose text or emoji presentation.
 */
const FORMAT_OR_SEPARATOR = /^[\p{Cf}\p{Zs}\p{Zl}\p{Zp}]$/u;
const BLANK_LETTERS: ReadonlySet<number> = new Set([0x034f, 0x115f, 0x1160, 0x2800, 0x3164, 0xffa0]);
function isHidden(char: string, code: number): boolean {
  return FORMAT_OR_SEPARATOR.test(char) || BLANK_LETTERS.has(code) || (code >= 0xfe00 && code <= 0xfe0d) || (code >= 0xe0100 && code <= 0xe01ef);
}

const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;

/** What may stand between a pictograph and the joiner of an emoji sequence: the emoji presentation selector, a skin tone. */
function isEmojiTail(code: number): boolean {
  return code === 0xfe0f || (code >= 0x1f3fb && code <= 0x1f3ff);
}

/** The parts `text` is shown as: runs of plain text, and one mark for each character that would hide. */
export function visibleParts(text: string, options: VisibleOptions = {}): VisiblePart[] {
  const chars = Array.from(text);
  const parts: VisiblePart[] = [];
  let plain = '';
  const flush = (): void => {
    if (plain !== '') parts.push({ kind: 'plain', text: plain });
    plain = '';
  };
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string;
    const code = char.codePointAt(0) as number;
    const flagEnd = code === WAVING_BLACK_FLAG ? subdivisionFlagEnd(chars, i) : i;
    if (flagEnd > i) {
      plain += chars.slice(i, flagEnd + 1).join('');
      i = flagEnd;
      continue;
    }
    const mark = markFor(chars, i, code, options);
    if (mark === undefined) {
      plain += char;
      continue;
    }
    flush();
    parts.push(mark);
  }
  flush();
  return parts;
}

/**
 * `text` made visible for an accessible name or a tooltip: one line (every
 * control shows), at most `max` characters, cut between characters and
 * never inside a mark, with `…` where it was cut.
 */
export function visibleLabel(text: string, max = LABEL_CHARS): string {
  let label = '';
  let length = 0;
  for (const part of visibleParts(text)) {
    const chars = Array.from(part.text);
    if (length + chars.length <= max) {
      label += part.text;
      length += chars.length;
      continue;
    }
    if (part.kind === 'plain') label += chars.slice(0, Math.max(0, max - length)).join('');
    return `${label}…`;
  }
  return label;
}

/** The mark for `chars[i]`, or undefined when it is shown as it is. */
function markFor(chars: readonly string[], i: number, code: number, options: VisibleOptions): VisiblePart | undefined {
  if (code < 0x20 || code === 0x7f) {
    if (options.keepLayout && isLayout(chars, i, code)) return undefined;
    // U+2400..U+241F are the Control Pictures of C0 (␀ … ␟); U+2421 is ␡.
    return { kind: 'control', text: String.fromCodePoint(code === 0x7f ? 0x2421 : 0x2400 + code), code };
  }
  if (code >= 0x80 && code <= 0x9f) return { kind: 'control', text: `\\u{${hex(code)}}`, code };
  if (code >= 0xd800 && code <= 0xdfff) return hidden(code); // a lone surrogate: no character at all
  if (code === 0x20 || !isHidden(chars[i] as string, code)) return undefined;
  if (code === ZWJ && joinsEmoji(chars, i)) return undefined;
  return hidden(code);
}

function hidden(code: number): VisiblePart {
  return { kind: 'hidden', text: `⟨U+${hex(code)}⟩`, code };
}

function hex(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}

/** A line feed, a tab, or a carriage return that ends a line (CR LF). */
function isLayout(chars: readonly string[], i: number, code: number): boolean {
  return code === 0x0a || code === 0x09 || (code === 0x0d && chars[i + 1] === '\n');
}

/** A zero-width joiner inside an emoji sequence (👨‍👩‍👧, 🏳️‍🌈, 👩🏽‍💻): part of one picture, not a hidden character. */
function joinsEmoji(chars: readonly string[], i: number): boolean {
  let before = i - 1;
  while (before >= 0 && isEmojiTail((chars[before] as string).codePointAt(0) as number)) before--;
  return before >= 0 && PICTOGRAPH.test(chars[before] as string) && PICTOGRAPH.test(chars[i + 1] ?? '');
}

/**
 * A subdivision flag (🏴 then tag letters and digits then the cancel tag,
 * as in the flag of Scotland): the index of its cancel tag, else `i`. Tag
 * characters anywhere else are hidden text and get marks.
 */
function subdivisionFlagEnd(chars: readonly string[], i: number): number {
  let at = i + 1;
  for (; at < chars.length; at++) {
    const code = (chars[at] as string).codePointAt(0) as number;
    const tagLetterOrDigit = (code >= 0xe0030 && code <= 0xe0039) || (code >= 0xe0061 && code <= 0xe007a);
    if (!tagLetterOrDigit) break;
  }
  return at > i + 1 && chars[at]?.codePointAt(0) === CANCEL_TAG ? at : i;
}
