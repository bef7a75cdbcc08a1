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
 * controls and DEL; format characters (`\p{Cf}`: zero-width, bidi controls,
 * tags, the BOM, the soft hyphen); line and paragraph separators and every
 * space separator but the space itself; Hangul fillers, the blank Braille
 * cell and the combining grapheme joiner; the variation selectors other than
 * the two that choose text or emoji presentation; a lone surrogate (no
 * character at all). `HIDDEN` holds those that are not controls.
 */
// eslint-disable-next-line no-misleading-character-class -- a class of single characters, tested one character at a time
const HIDDEN = /^[\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u034f\u115f\u1160\u2800\u3164\uffa0\ufe00-\ufe0d\u{e0100}-\u{e01ef}]$/u;

/** Text without a character outside printable ASCII (and, with layout, the line feed and tab) needs no look at all: the fast path. */
const ONLY_PRINTABLE = /^[\x20-\x7e]*$/;
const ONLY_PRINTABLE_LAYOUT = /^[\t\n\x20-\x7e]*$/;

const ZWJ = 0x200d;
const WAVING_BLACK_FLAG = 0x1f3f4;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;

/** What a UTF-16 code unit is to the scan: `HIDDEN` made into a lookup, so that a gigabyte is scanned without a Unicode regex. */
const enum Unit {
  Plain = 0,
  Control = 1,
  Hidden = 2,
  Surrogate = 3,
  Joiner = 4,
}

let units: Uint8Array | undefined;

/** The lookup, built from the table the first time text outside printable ASCII is seen (65,536 tests, a few milliseconds). */
function unitTable(): Uint8Array {
  if (units !== undefined) return units;
  const table = new Uint8Array(0x10000);
  for (let code = 0; code < 0x10000; code++) {
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) table[code] = Unit.Control;
    else if (code >= 0xd800 && code <= 0xdfff) table[code] = Unit.Surrogate;
    else if (code === ZWJ) table[code] = Unit.Joiner;
    else if (HIDDEN.test(String.fromCharCode(code))) table[code] = Unit.Hidden;
  }
  units = table;
  return table;
}

/** The Control Pictures of C0 (␀ … ␟), by code. */
const C0_MARKS = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(0x2400 + code));

/**
 * `text` as it is shown: each character of the table replaced by its mark
 * (ESC as `␛`, a bidi override as `⟨U+202E⟩`), the rest as it is. The same
 * text as `visibleParts` joined, made without the parts: a gigabyte of gate
 * output goes through it.
 */
export function visibleText(text: string, options: VisibleOptions = {}): string {
  const layout = options.keepLayout === true;
  if ((layout ? ONLY_PRINTABLE_LAYOUT : ONLY_PRINTABLE).test(text)) return text;
  let out = '';
  let copied = 0;
  scan(text, layout, (at, length, mark) => {
    out += text.slice(copied, at) + mark;
    copied = at + length;
  });
  return copied === 0 ? text : out + text.slice(copied);
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
  scan(text, options.keepLayout === true, (at, length, mark, kind, code) => {
    plain += text.slice(copied, at);
    copied = at + length;
    if (kind === 'plain') {
      plain += mark;
      return;
    }
    if (plain !== '') parts.push({ kind: 'plain', text: plain });
    plain = '';
    parts.push({ kind, text: mark, code });
  });
  plain += text.slice(copied);
  if (plain !== '') parts.push({ kind: 'plain', text: plain });
  return parts;
}

/** Where a stretch of text is not shown as it is, what it is shown as: the mark, its kind, the character it stands for. */
type Found = (at: number, length: number, mark: string, kind: VisibleKind, code: number) => void;

/**
 * Calls `found` for every stretch of `text` that is not shown as it is, in
 * order: a character of the table (its mark), or with layout a CR LF (a
 * plain line feed). What lies between is shown as it is.
 */
function scan(text: string, layout: boolean, found: Found): void {
  const table = unitTable();
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const unit = table[code] as Unit;
    if (unit === Unit.Plain) continue;
    if (unit === Unit.Control) {
      if (layout && (code === 0x0a || code === 0x09)) continue;
      if (layout && code === 0x0d && text.charCodeAt(i + 1) === 0x0a) {
        found(i++, 2, '\n', 'plain', 0x0a);
        continue;
      }
      found(i, 1, controlMark(code), 'control', code);
    } else if (unit === Unit.Hidden || (unit === Unit.Joiner && !joinsEmoji(text, i))) {
      found(i, 1, hiddenMark(code), 'hidden', code);
    } else if (unit === Unit.Surrogate) {
      i = astral(text, i, found);
    }
  }
}

/** A surrogate at `i`: a pair shown as it is (a subdivision flag whole), a marked pair, or a lone surrogate; the index of the last unit taken. */
function astral(text: string, i: number, found: Found): number {
  const code = text.codePointAt(i) as number;
  if (code < 0x10000) {
    found(i, 1, hiddenMark(code), 'hidden', code);
    return i;
  }
  if (code === WAVING_BLACK_FLAG) return subdivisionFlagEnd(text, i);
  if (HIDDEN.test(text.slice(i, i + 2))) found(i, 2, hiddenMark(code), 'hidden', code);
  return i + 1;
}

function controlMark(code: number): string {
  if (code < 0x20) return C0_MARKS[code] as string;
  // U+2421 is ␡; C1 has no pictures.
  return code === 0x7f ? '␡' : `\\u{${hex(code)}}`;
}

function hiddenMark(code: number): string {
  return `⟨U+${hex(code)}⟩`;
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

/**
 * A subdivision flag at `i` (🏴, then tag letters and digits, then the
 * cancel tag, as in the flag of Scotland): the index of the cancel tag's
 * last unit; else the index of 🏴's last unit. Tag characters anywhere else
 * are hidden text and get marks.
 */
function subdivisionFlagEnd(text: string, i: number): number {
  let at = i + 2;
  for (; at < text.length; at += 2) {
    const code = text.codePointAt(at) as number;
    const tagLetterOrDigit = (code >= 0xe0030 && code <= 0xe0039) || (code >= 0xe0061 && code <= 0xe007a);
    if (!tagLetterOrDigit) break;
  }
  return at > i + 2 && text.codePointAt(at) === 0xe007f ? at + 1 : i + 1;
}
