/**
 * The `envFile` of an MCP server definition, in the dotenv format VS Code
 * reads: `KEY=VALUE` lines, `#` comments, an optional `export ` prefix, values
 * optionally in single quotes (literal) or double quotes (with `\n`, `\r`,
 * `\t`, `\"` and `\\` escapes). A line that fits none of this is ignored, as
 * dotenv ignores it. Values are taken as written: no variable in them is
 * expanded.
 */

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$/;

export function parseDotenv(text: string): Record<string, string> {
  const entries: Array<[string, string]> = [];
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(?:#|$)/.test(line)) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const value = unquote(match[2] ?? '');
    if (value !== undefined && !value.includes('\0')) entries.push([match[1] ?? '', value]);
  }
  // fromEntries defines own properties (a key `__proto__` stays a key); a later line wins.
  return Object.fromEntries(entries);
}

/** The value of one line; undefined when a quote opens and never closes. */
function unquote(raw: string): string | undefined {
  const quote = raw[0];
  if (quote === '"' || quote === "'") {
    const end = closingQuote(raw, quote);
    if (end === -1) return undefined;
    const inner = raw.slice(1, end);
    return quote === "'" ? inner : inner.replace(/\\([nrt"\\])/g, (_m, c: string) => ESCAPES[c] ?? c);
  }
  // An unquoted value ends at a ` #` comment.
  return raw.replace(/\s+#.*$/, '');
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

function closingQuote(raw: string, quote: string): number {
  for (let i = 1; i < raw.length; i++) {
    if (quote === '"' && raw[i] === '\\') i++;
    else if (raw[i] === quote) return i;
  }
  return -1;
}
