import { hasMarks, visibleParts, visibleText } from '../../shared/visibleText';

/**
 * How a name or a command line from a definition is shown to people: every
 * character that would hide or rearrange text (a newline, a bidi override, a
 * zero-width space) shown by its mark (docs/architecture.md, "Text bound for
 * a person"), so a dialog or a problem line shows what is really there.
 */

/** Whether `text` holds a character that does not show as itself (one the table of src/shared/visibleText.ts marks). */
export function hasInvisible(text: string): boolean {
  return hasMarks(text);
}

/** A name in double quotes, clipped, with every invisible character shown by its mark: `"my␊server"`. */
export function quoteName(name: string, max = 80): string {
  const clipped = name.length > max ? `${name.slice(0, max - 1)}…` : name;
  return `"${visibleText(clipped.replace(/["\\]/g, (c) => `\\${c}`))}"`;
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
  const escaped = visibleParts(word)
    .map((part) => (part.code === undefined ? part.text.replace(/[\\']/g, (c) => `\\${c}`) : escapeCode(part.code)))
    .join('');
  return `$'${escaped}'`;
}

/** A marked character as a `$'…'` escape, so the line can be typed as shown. */
function escapeCode(code: number): string {
  if (code === 0x0a) return '\\n';
  if (code === 0x0d) return '\\r';
  if (code === 0x09) return '\\t';
  return code > 0xffff ? `\\U${code.toString(16).padStart(8, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
