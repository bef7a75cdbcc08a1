import { visibleText } from '../shared/visibleText';

/**
 * Text on its way to a terminal (docs/architecture.md, "Text bound for a
 * person"): every control character shown by its mark, and rows laid out so
 * that streamed output cannot pass for Candor's own lines. Every row of a
 * command's or a gate's output starts with `STREAM_PREFIX`; where the
 * terminal's width is known, Candor breaks the rows itself, so the terminal
 * never wraps one and no row of output starts at the left edge (a printed
 * `outcome: shipped` reads `│ outcome: shipped`). A line of Candor's own
 * that is wider than the terminal goes on in rows that start with
 * `CONTINUATION_PREFIX`.
 */

/** The start of every row of streamed output. */
export const STREAM_PREFIX = '│ ';
/** The start of a row that continues one of Candor's own lines past the terminal's width. */
export const CONTINUATION_PREFIX = '↳ ';

/** Narrower than this, a terminal is taken to be this wide: a prefix and a wide character. */
const MIN_COLUMNS = 8;
const TAB_STOP = 8;
type Row = 'none' | 'own' | 'stream';

/**
 * Columns a character may take: printable ASCII one, anything else two. A
 * wide character takes two and most others one; counting two can only make
 * a row shorter than the terminal, never longer, whatever the font and the
 * terminal's idea of ambiguous widths.
 */
function columnsOf(char: string): number {
  const code = char.charCodeAt(0);
  return code >= 0x20 && code < 0x7f ? 1 : 2;
}

function columnsOfText(text: string): number {
  let columns = 0;
  for (const char of text) columns += columnsOf(char);
  return columns;
}

const STREAM_PREFIX_COLUMNS = columnsOfText(STREAM_PREFIX);
const CONTINUATION_COLUMNS = columnsOfText(CONTINUATION_PREFIX);

/**
 * One terminal's rows: what is open and how many columns it holds. `own`
 * and `stream` return the text to write, with `\n` between rows (a
 * pseudoterminal turns it into CR LF).
 */
export class TerminalRows {
  #open: Row = 'none';
  #column = 0;

  /** `columns`: the terminal's width now (`stdout.columns`, a pseudoterminal's dimensions), undefined when unknown (a pipe). */
  constructor(private readonly columns: () => number | undefined = () => undefined) {}

  /** Candor's own text: its lines start at the left edge; a line wider than the terminal goes on after `CONTINUATION_PREFIX`. */
  own(text: string): string {
    return this.#lay(visibleText(text, { keepLayout: true }), 'own');
  }

  /** A command's or a gate's output, in chunks of any size: every row starts with `STREAM_PREFIX`. */
  stream(text: string): string {
    return this.#lay(visibleText(text, { keepLayout: true }), 'stream');
  }

  /** `\n` when a row is open, else '': before something that must start at the left edge. */
  endRow(): string {
    if (this.#open === 'none') return '';
    this.#open = 'none';
    this.#column = 0;
    return '\n';
  }

  /** What was last returned never reached the terminal (dropped, and a line saying so written instead): the next text starts a row. */
  lostRow(): void {
    this.#open = 'none';
    this.#column = 0;
  }

  #lay(text: string, kind: 'own' | 'stream'): string {
    if (text === '') return '';
    const out = this.#open !== 'none' && this.#open !== kind ? this.endRow() : '';
    const width = this.#width();
    return out + (width === undefined ? this.#layUnbroken(text, kind) : this.#layBroken(text, kind, width));
  }

  /** Width unknown (a pipe, a file): rows are the lines; each of output still starts with the prefix. */
  #layUnbroken(text: string, kind: 'own' | 'stream'): string {
    const ends = text.endsWith('\n');
    const prefix = kind === 'stream' && this.#open === 'none' ? STREAM_PREFIX : '';
    // replaceAll, not split and join: on a chunk of many short lines it is about five times faster.
    const body = kind === 'stream' ? (ends ? text.slice(0, -1) : text).replaceAll('\n', `\n${STREAM_PREFIX}`) + (ends ? '\n' : '') : text;
    this.#open = ends ? 'none' : kind;
    // Where in the row is not known: if a width becomes known, the next character starts a new row.
    this.#column = ends ? 0 : Number.POSITIVE_INFINITY;
    return prefix + body;
  }

  #layBroken(text: string, kind: 'own' | 'stream', width: number): string {
    let out = '';
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (i > 0) out += this.endRow() || '\n';
      // After the last line feed: nothing yet of the next row.
      if (line === '' && i === lines.length - 1) break;
      if (this.#open === 'none') {
        this.#open = kind;
        this.#column = kind === 'stream' ? STREAM_PREFIX_COLUMNS : 0;
        if (kind === 'stream') out += STREAM_PREFIX;
      }
      out += kind === 'stream' ? this.#breakStream(line, width) : this.#breakOwn(line, width);
    }
    return out;
  }

  #width(): number | undefined {
    const columns = this.columns();
    if (columns === undefined || !Number.isFinite(columns) || columns <= 0) return undefined;
    return Math.max(MIN_COLUMNS, Math.floor(columns));
  }

  /** A new row of `kind` (its prefix written), after the current one. */
  #nextRow(prefix: string, prefixColumns: number): string {
    this.#column = prefixColumns;
    return `\n${prefix}`;
  }

  /** Streamed output broken wherever the row is full: every character of it shown, none moved; a tab as the spaces to its stop. */
  #breakStream(line: string, width: number): string {
    let out = '';
    let from = 0;
    for (let i = 0; i < line.length; ) {
      const code = line.charCodeAt(i);
      if (code === 0x09) {
        out += line.slice(from, i) + this.#place('\t', width, STREAM_PREFIX, STREAM_PREFIX_COLUMNS);
        from = ++i;
        continue;
      }
      // A surrogate pair is one character; anything but printable ASCII may take two columns.
      const units = code >= 0xd800 && code <= 0xdbff && i + 1 < line.length ? 2 : 1;
      const columns = code >= 0x20 && code < 0x7f ? 1 : 2;
      if (this.#column + columns > width) {
        out += line.slice(from, i) + this.#nextRow(STREAM_PREFIX, STREAM_PREFIX_COLUMNS);
        from = i;
      }
      this.#column += columns;
      i += units;
    }
    return out + line.slice(from);
  }

  /** One character at the current column, on a new row first when it does not fit; a tab as the spaces to its stop. */
  #place(char: string, width: number, prefix: string, prefixColumns: number): string {
    let out = '';
    if (char === '\t') {
      if (this.#column >= width) out += this.#nextRow(prefix, prefixColumns);
      const spaces = Math.min(TAB_STOP - (this.#column % TAB_STOP), width - this.#column);
      this.#column += spaces;
      return out + ' '.repeat(spaces);
    }
    const columns = columnsOf(char);
    if (this.#column + columns > width) out += this.#nextRow(prefix, prefixColumns);
    this.#column += columns;
    return out + char;
  }

  /** Candor's line broken between words where one fits, else inside the word. */
  #breakOwn(line: string, width: number): string {
    let out = '';
    const words = line.split(' ');
    for (let i = 0; i < words.length; i++) {
      const word = words[i] as string;
      const space = i > 0 ? 1 : 0;
      const columns = columnsOfText(word);
      if (space === 1 && this.#column + 1 + columns > width && columns <= width - CONTINUATION_COLUMNS && this.#column > CONTINUATION_COLUMNS) {
        out += this.#nextRow(CONTINUATION_PREFIX, CONTINUATION_COLUMNS);
      } else if (space === 1) {
        out += this.#place(' ', width, CONTINUATION_PREFIX, CONTINUATION_COLUMNS);
      }
      for (const char of word) out += this.#place(char, width, CONTINUATION_PREFIX, CONTINUATION_COLUMNS);
    }
    return out;
  }
}
