import { visibleParts } from '../../shared/visibleText';

/**
 * The rules about a command line that approval rests on
 * (docs/architecture.md, "Commands"): when a remembered or configured
 * prefix covers a line, and when a line may be typed into a terminal.
 */

/** Characters that chain, substitute or redirect when they stand outside quotes. */
const SHELL_OPERATORS = new Set([';', '&', '|', '$', '`', '<', '>', '(', ')', '\n', '\r']);

/**
 * Whether `prefix` covers `command`: the line starts with it, at a word's
 * end, and the rest of the line holds no shell operator outside quotes.
 * Inside double quotes `$` and backquote still expand, so they count there
 * too; inside single quotes nothing does. `npm test` covers `npm test --
 * --grep x`, never `npm testx`, `npm test; curl …` or `npm test $(…)`.
 */
export function prefixCovers(prefix: string, command: string): boolean {
  const wanted = prefix.trim();
  if (wanted === '') return false;
  const line = command.trim();
  if (line === wanted) return true;
  if (!line.startsWith(wanted)) return false;
  const rest = line.slice(wanted.length);
  // At a word's end, whatever the prefix ends with: "git " never covers `git-evil`.
  if (!/^\s/.test(rest)) return false;
  return !hasOperatorOutsideQuotes(rest);
}

/** Whether the text has a shell operator (SHELL_OPERATORS) that is not inside single quotes (or, for `$` and backquote, inside any quotes). */
export function hasOperatorOutsideQuotes(text: string): boolean {
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === '\\' && quote === undefined && text[i + 1] !== '\n' && text[i + 1] !== '\r') {
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '$' || c === '`' || c === '\n' || c === '\r') return true;
      else if (c === '\\') i++;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (SHELL_OPERATORS.has(c)) return true;
  }
  // An open quote leaves the rest to whatever the shell reads next: not covered.
  return quote !== undefined;
}

/**
 * Why the line must not be typed into a terminal, or undefined: a newline,
 * a carriage return or any other control character would run (or hide)
 * more than the user sees; an invisible or bidi character (the one table,
 * src/shared/visibleText.ts) would hide what runs. A tab is typed as it is.
 */
export function terminalRefusal(command: string): string | undefined {
  if (/[\n\r]/.test(command)) return 'it holds a line break, which a terminal would run as it is typed';
  const marks = visibleParts(command, { keepLayout: true }).filter((part) => part.kind !== 'plain');
  if (marks.some((part) => part.kind === 'control')) return 'it holds a control character, which a terminal would act on';
  if (marks.length > 0) return 'it holds an invisible or bidirectional character, which would hide what runs';
  return undefined;
}
