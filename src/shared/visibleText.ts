/**
 * Text bound for a person, shown so that nothing in it hides or acts
 * (docs/architecture.md, "Text bound for a person"): a command the user is
 * asked to run, an MCP call's arguments, a diff in the chat; gate output,
 * the model's words and file names on their way to a terminal, a commit
 * message, a pull request or the log. Control characters would break a
 * line, move the cursor or drive the terminal (an escape sequence sets the
 * clipboard or the title), and zero-width, bidi and other format characters
 * would make what is shown differ from what is there (a "Trojan Source"
 * reordering, a space that is not one). Each becomes a visible mark; letters
 * of every script and emoji stay as they are.
 *
 * Pure and without imports: the webview bundle and the core both use it.
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
   * Output, messages and diffs: a line feed and a tab are layout, kept as
   * they are, and a carriage return before a line feed is dropped (CR LF
   * becomes LF). Without it (a command, a path, a label, one line of a
   * terminal) every control character shows.
   */
  readonly keepLayout?: boolean;
}

/** Accessible names quote a command or a path up to this many characters. */
export const LABEL_CHARS = 80;

/**
 * The one table: every character that is shown as a mark. C0 and C1
 * controls and DEL (`\p{Cc}`); format characters (`\p{Cf}`: zero-width,
 * bidi controls, tags, the BOM, the soft hyphen); line and paragraph
 * separators and every space separator but the space itself; Hangul
 * fillers, the blank Braille cell and the combining grapheme joiner; the
 * variation selectors other than the two that choose text or emoji
 * presentation; a lone surrogate (no character at all). `LAYOUT_CLASS` is
 * the same less the line feed and the tab.
 */
const OTHERS = '\\p{Cf}\\p{Zl}\\p{Zp}\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000\\u034f\\u115f\\u1160\\u2800\\u3164\\uffa0\\ufe00-\\ufe0d\\u{e0100}-\\u{e01ef}\\ud800-\\udfff';
const CLASS = `[\\p{Cc}${OTHERS}]`;
const LAYOUT_CLASS = `[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${OTHERS}]`;
/** A subdivision flag (🏴, tag letters and digits, the cancel tag: the flag of Scotland): one picture, never marked. */
const SUBDIVISION_FLAG = '\\u{1f3f4}[\\u{e0030}-\\u{e0039}\\u{e0061}-\\u{e007a}]+\\u{e007f}';
// A lone surrogate is a character of the table: the class names the surrogate range on purpose.
// eslint-disable-next-line no-misleading-character-class -- see above
const SCAN = new RegExp(`${SUBDIVISION_FLAG}|${CLASS}`, 'gu');
// eslint-disable-next-line no-misleading-character-class -- see above
const SCAN_LAYOUT = new RegExp(`${SUBDIVISION_FLAG}|\\r\\n|${LAYOUT_CLASS}`, 'gu');
/** Text without a character outside printable ASCII (and, with layout, the line feed and tab) needs no look at all: the fast path. */
const ONLY_PRINTABLE = /^[\x20-\x7e]*$/;
const ONLY_PRINTABLE_LAYOUT = /^[\t\n\x20-\x7e]*$/;

const ZWJ = 0x200d;
const WAVING_BLACK_FLAG = 0x1f3f4;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;

/**
 * `text` as it is shown: each character of the table replaced by its mark
 * (ESC as `␛`, a bidi override as `⟨U+202E⟩`), the rest as it is. The same
 * text as `visibleParts` joined, made without the parts: a gigabyte of gate
 * output goes through it.
 */
export function visibleText(text: string, options: VisibleOptions = {}): string {
  const layout = options.keepLayout === true;
  if ((layout ? ONLY_PRINTABLE_LAYOUT : ONLY_PRINTABLE).test(text)) return text;
  return text.replace(layout ? SCAN_LAYOUT : SCAN, (found: string, at: number) => markFor(text, found, at)?.text ?? found);
}

/** Whether `text` shows a mark anywhere: it holds a control, invisible or look-alike character. */
export function hasMarks(text: string): boolean {
  return visibleText(text) !== text;
}

/** The parts `text` is shown as: runs of plain text, and one mark for each character that would hide. */
export function visibleParts(text: string, options: VisibleOptions = {}): VisiblePart[] {
  const parts: VisiblePart[] = [];
  let plain = '';
  let copied = 0;
  for (const match of text.matchAll(options.keepLayout === true ? SCAN_LAYOUT : SCAN)) {
    const at = match.index ?? 0;
    const mark = markFor(text, match[0], at);
    plain += text.slice(copied, at);
    copied = at + match[0].length;
    if (mark === undefined) plain += match[0];
    else if (mark.kind === 'plain') plain += mark.text;
    else {
      if (plain !== '') parts.push({ kind: 'plain', text: plain });
      plain = '';
      parts.push(mark);
    }
  }
  plain += text.slice(copied);
  if (plain !== '') parts.push({ kind: 'plain', text: plain });
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

/**
 * What a match of the scan at `at` is shown as: a mark, plain text (CR LF
 * as LF), or undefined when it stays as it is (a subdivision flag, a joiner
 * inside an emoji sequence).
 */
function markFor(text: string, found: string, at: number): VisiblePart | undefined {
  if (found === '\r\n') return { kind: 'plain', text: '\n' };
  const code = found.codePointAt(0) as number;
  if (code === WAVING_BLACK_FLAG) return undefined;
  if (code < 0x20 || code === 0x7f) {
    // U+2400..U+241F are the Control Pictures of C0 (␀ … ␟); U+2421 is ␡.
    return { kind: 'control', text: String.fromCodePoint(code === 0x7f ? 0x2421 : 0x2400 + code), code };
  }
  if (code >= 0x80 && code <= 0x9f) return { kind: 'control', text: `\\u{${hex(code)}}`, code };
  if (code === ZWJ && joinsEmoji(text, at)) return undefined;
  return { kind: 'hidden', text: `⟨U+${hex(code)}⟩`, code };
}

function hex(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}

/** What may stand between a pictograph and the joiner of an emoji sequence: the emoji presentation selector, a skin tone. */
function isEmojiTail(code: number): boolean {
  return code === 0xfe0f || (code >= 0x1f3fb && code <= 0x1f3ff);
}

/** A zero-width joiner (at `at`) inside an emoji sequence (👨‍👩‍👧, 🏳️‍🌈, 👩🏽‍💻): part of one picture, not a hidden character. */
function joinsEmoji(text: string, at: number): boolean {
  let before = at;
  let char: string;
  do {
    char = charBefore(text, before);
    before -= char.length;
  } while (char !== '' && isEmojiTail(char.codePointAt(0) as number));
  const after = String.fromCodePoint(text.codePointAt(at + 1) ?? 0x20);
  return char !== '' && PICTOGRAPH.test(char) && PICTOGRAPH.test(after);
}

/** The character that ends just before `at` (a surrogate pair whole), or '' at the start. */
function charBefore(text: string, at: number): string {
  if (at <= 0) return '';
  const low = text.charCodeAt(at - 1);
  if (low >= 0xdc00 && low <= 0xdfff && at >= 2) {
    const high = text.charCodeAt(at - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(at - 2, at);
  }
  return text.slice(at - 1, at);
}
