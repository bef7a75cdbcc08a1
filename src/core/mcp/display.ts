/**
 * How a name or a command line from a definition is shown to people: every
 * character that would hide or rearrange text (a newline, a bidi override, a
 * zero-width space) written out as an escape, so a dialog or a problem line
 * shows what is really there.
 */

/** Characters that do not show as themselves: controls, format characters (bidi, zero-width), line and paragraph separators. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** Whether `text` holds a character that does not show as itself. */
export function hasInvisible(text: string): boolean {
  return new RegExp(INVISIBLE.source, 'u').test(text);
}

/** A name in double quotes, clipped, with every invisible character escaped: `"my\nserver"`. */
export function quoteName(name: string, max = 80): string {
  const clipped = name.length > max ? `${name.slice(0, max - 1)}…` : name;
  return `"${clipped.replace(/["\\]/g, (c) => `\\${c}`).replace(INVISIBLE, escapeChar)}"`;
}

/** The mask shown for a secret value. */
export const MASK = '••••';

/** Characters a POSIX shell takes literally, plus the mask. */
const SHELL_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * One word as a POSIX shell would need it typed: bare when safe, in single
 * quotes otherwise, and in `$'…'` with escapes when it holds an invisible
 * character, so a newline shows as `\n` instead of breaking the line.
 */
export function shellQuote(word: string): string {
  if (word === '') return "''";
  if (SHELL_SAFE.test(word.replaceAll(MASK, 'x'))) return word;
  if (!hasInvisible(word)) return `'${word.replace(/'/g, `'\\''`)}'`;
  const escaped = word.replace(/[\\']/g, (c) => `\\${c}`).replace(INVISIBLE, escapeChar);
  return `$'${escaped}'`;
}

function escapeChar(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  const code = ch.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\U${code.toString(16).padStart(8, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
