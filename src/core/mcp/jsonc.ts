/**
 * JSON with comments, as VS Code writes `.vscode/mcp.json`: `//` and `/* *\/`
 * comments and trailing commas. Each comment and each trailing comma is
 * blanked to spaces of the same length (newlines kept), so the text keeps
 * its shape and `JSON.parse` does the rest: a position in its error is a
 * position in the file. V8's parser is not recursive, so a deeply nested file
 * cannot overflow the stack. Bounding the size is the reader's job.
 */

export type JsoncResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

export function parseJsonc(text: string): JsoncResult {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const blanked = blankCommentsAndTrailingCommas(source);
  try {
    return { ok: true, value: JSON.parse(blanked) as unknown };
  } catch (err) {
    return { ok: false, reason: describeJsonError(err, source) };
  }
}

/** One pass over the text, outside strings only; `out` holds slices, so a 10 MB file is copied once. */
function blankCommentsAndTrailingCommas(text: string): string {
  const out: string[] = [];
  let copied = 0;
  /** Index in `out` of the last comma with nothing but blanks and comments after it yet. */
  let openComma = -1;
  const flush = (to: number): void => {
    if (to > copied) out.push(text.slice(copied, to));
    copied = to;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      i = stringEnd(text, i);
      openComma = -1;
    } else if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      const end = text[i + 1] === '/' ? lineCommentEnd(text, i) : blockCommentEnd(text, i);
      flush(i);
      out.push(text.slice(i, end).replace(/[^\r\n]/g, ' '));
      copied = end;
      i = end - 1;
    } else if (ch === ',') {
      flush(i);
      out.push(',');
      openComma = out.length - 1;
      copied = i + 1;
    } else if (ch === '}' || ch === ']') {
      if (openComma !== -1) out[openComma] = ' ';
      openComma = -1;
    } else if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') {
      openComma = -1;
    }
  }
  flush(text.length);
  return out.join('');
}

/** Index of the closing quote of the string opening at `start` (or the last index when it never closes: JSON.parse reports it). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"' || text[i] === '\n') return i;
  }
  return text.length - 1;
}

function lineCommentEnd(text: string, start: number): number {
  const newline = text.indexOf('\n', start);
  return newline === -1 ? text.length : newline;
}

/** An unclosed block comment runs to the end, as in VS Code's own parser. */
function blockCommentEnd(text: string, start: number): number {
  const close = text.indexOf('*/', start + 2);
  return close === -1 ? text.length : close + 2;
}

/**
 * "not valid JSON: Expected ',' or '}' after property value (line 3,
 * column 7)". Only V8's own words are kept: its "Unexpected token" message
 * quotes a piece of the text, and the file may hold a token.
 */
function describeJsonError(err: unknown, text: string): string {
  const message = err instanceof Error ? err.message : '';
  const located = /^(.*?) (?:in|after) JSON at position (\d+)/.exec(message);
  if (located) return `not valid JSON: ${located[1]} (${lineAndColumn(text, Number(located[2]))})`;
  const token = /^Unexpected token '(.)'/u.exec(message);
  if (token) return `not valid JSON: unexpected ${JSON.stringify(token[1])}`;
  return /end of JSON input/.test(message) ? 'not valid JSON: it ends too early' : 'not valid JSON';
}

function lineAndColumn(text: string, at: number): string {
  const before = text.slice(0, at);
  return `line ${before.split('\n').length}, column ${at - before.lastIndexOf('\n')}`;
}
