/**
 * The one redaction pass (docs/architecture.md, "Secrets"): everything Candor
 * persists, logs, prints or posts to a webview goes through `redact` first.
 * It removes every secret of the set (the API key, the values of the
 * environment's credential-looking variables, URL passwords found there)
 * wherever it appears, and by pattern any `Authorization` or `Bearer` value
 * and the password of any `scheme://user:password@host`, whoever's they are.
 */
import type { Logger } from './log';
import { visibleText } from '../shared/visibleText';

export const REDACTED = '[redacted]';

/** A key shorter than this is never used as a pattern: it would blank out ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** How far before a blank a pattern match that spans it can start (known secrets aside: they reach back their own length). */
export const MATCH_REACH = 128;

// Every pattern stays on one line (spaces and tabs, never a newline), so the
// redaction of a text is the redaction of each of its lines; and the blanks
// inside a match are at most 16 long, so a match that spans a blank starts at
// most MATCH_REACH characters before it. A stream uses both to redact the
// part it has finished once and only redo the part still growing.
const BEARER = /\b(Bearer)([ \t]{1,16})[A-Za-z0-9._~+/=:-]+/gi;
/** `Authorization: Basic …`, `"api_key":"…"`, `x-api-key=…`: the value, with its scheme word when it has one (Bearer is handled above). */
const CREDENTIAL_FIELD = /\b((?:proxy-)?authorization|x-api-key|(?:openai[-_])?api[-_]?key)(["']?[ \t]{0,16}[:=][ \t]{0,16}["']?)(?!Bearer\b)(?:(?:Basic|Token|Digest|ApiKey|Key)[ \t]{1,16})?[^\s"',;}]+/gi;
/** OpenAI-style keys (`sk-…`, `sk-proj-…`) even when nobody told us about them. */
const SK_KEY = /\bsk-[A-Za-z0-9_-]{16,}/g;
/**
 * `scheme://user:password@`: the password, up to the last `@` before the
 * path. The match starts at `://` and looks back for the scheme, so only a
 * `://` costs more than a step; each part is bounded.
 */
const URL_PASSWORD = /:\/\/(?<=\b[a-z][a-z0-9+.-]{0,31}:\/\/)([^\s:/?#@"'<>`]{0,256}):([^\s/?#"'<>`]{1,512})@/gi;

/** `text` with every known secret and every credential-looking value replaced by `[redacted]`. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  return maskSecrets(text, allForms(secrets))
    .replace(BEARER, (_m, word: string, space: string) => `${word}${space}${REDACTED}`)
    .replace(CREDENTIAL_FIELD, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`)
    .replace(SK_KEY, REDACTED)
    .replace(URL_PASSWORD, (_m, user: string) => `://${user}:${REDACTED}@`);
}

/** The passwords of the `scheme://user:password@` URLs in `text`, as written and percent-decoded. */
export function urlPasswords(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(URL_PASSWORD)) {
    const password = match[2] ?? '';
    found.add(password);
    try {
      found.add(decodeURIComponent(password));
    } catch {
      // not valid percent-encoding: the written form is the only one
    }
  }
  return [...found];
}

/**
 * A name that looks like it holds a credential: `*TOKEN*`, `*SECRET*`,
 * `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`, `*API_KEY*`, `*PRIVATE_KEY*`,
 * `*_KEY`, in any case.
 */
export function looksLikeCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  return CREDENTIAL_WORDS.some((word) => upper.includes(word)) || upper.endsWith('_KEY');
}

const CREDENTIAL_WORDS = ['TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'CREDENTIAL', 'API_KEY', 'PRIVATE_KEY'];

/**
 * Whether a value can be a pattern: not shorter than MIN_SECRET_LENGTH, not a
 * plain number, not `true`/`false`, not an absolute path. Those would blank out
 * ordinary text (`TOKENIZERS_PARALLELISM=true`, `GOOGLE_APPLICATION_CREDENTIALS=/path`).
 */
export function isUsableSecret(value: string): boolean {
  if (value.length < MIN_SECRET_LENGTH) return false;
  if (/^[+-]?\d+(?:[.,]\d+)*$/.test(value) || /^(?:true|false)$/i.test(value)) return false;
  return !(value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value) || value.startsWith('\\\\'));
}

/** Each form a secret may take in text: raw, escaped inside a JSON string, percent-encoded in a URL. */
export function secretForms(secret: string): string[] {
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])];
}

/** Each usable secret in each of its forms. */
function allForms(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || !isUsableSecret(secret)) continue;
    for (const form of secretForms(secret)) forms.add(form);
  }
  return [...forms];
}

/**
 * Replaces every occurrence of every needle. Occurrences are found in the
 * original text and merged where they overlap, so a key containing
 * another, or two keys side by side sharing characters, leave no piece behind.
 */
function maskSecrets(text: string, needles: readonly string[]): string {
  const spans: Array<[number, number]> = [];
  for (const needle of needles) {
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) spans.push([at, at + needle.length]);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = '';
  let copied = 0;
  let open: [number, number] | undefined;
  for (const span of spans) {
    if (open && span[0] < open[1]) {
      open[1] = Math.max(open[1], span[1]);
      continue;
    }
    if (open) {
      out += REDACTED;
      copied = open[1];
    }
    out += text.slice(copied, span[0]);
    copied = span[0];
    open = [span[0], span[1]];
  }
  if (open) {
    out += REDACTED;
    copied = open[1];
  }
  return out + text.slice(copied);
}

/** Where a secret of the set came from when nobody said: a value handed over as a plain string. */
export const UNNAMED_SOURCE = 'a secret Candor was given';

/**
 * The secrets of this process: the key from SecretStorage once read, and what
 * environmentSecrets finds. One instance is shared by everything that writes,
 * logs or posts, so a key set later is redacted from then on. Each value
 * remembers where it came from (`OPENAI_API_KEY`, `GITHUB_TOKEN`, "the API
 * key"), so a refusal can name it without showing it.
 */
export class SecretSet {
  readonly #sources = new Map<string, string>();

  constructor(initial: Iterable<string | undefined> = [], source = UNNAMED_SOURCE) {
    for (const value of initial) this.add(value, source);
  }

  /**
   * Adds a secret, each line of it on its own (redaction works line by line),
   * trimmed; a line that cannot be a pattern (isUsableSecret) is ignored. A
   * value already known keeps its first source.
   */
  add(value: string | undefined, source = UNNAMED_SOURCE): void {
    if (typeof value !== 'string') return;
    for (const line of value.split(/\r?\n/)) {
      const trimmed = line.trim();
      if (isUsableSecret(trimmed) && !this.#sources.has(trimmed)) this.#sources.set(trimmed, source);
    }
  }

  values(): string[] {
    return [...this.#sources.keys()];
  }

  /** Each value with where it came from. */
  entries(): Array<{ readonly value: string; readonly source: string }> {
    return [...this.#sources].map(([value, source]) => ({ value, source }));
  }

  redact(text: string): string {
    return redact(text, this.#sources.keys());
  }

  /** The same object with every string inside passed through `redact` (for records and webview messages). */
  redactDeep<T>(value: T): T {
    return redactValue(value, (text) => this.redact(text)) as T;
  }
}

/**
 * A logger that redacts every line before `sink` sees it, with the secrets
 * known at the time of the call, and shows its control characters as marks
 * (docs/architecture.md, "Text bound for a person"): a log line quotes
 * servers, models and file names.
 */
export function redactingLogger(sink: Logger, secrets: SecretSet): Logger {
  const clean = (m: string): string => visibleText(secrets.redact(m), { keepLayout: true });
  return {
    trace: (m) => sink.trace(clean(m)),
    info: (m) => sink.info(clean(m)),
    warn: (m) => sink.warn(clean(m)),
    error: (m) => sink.error(clean(m)),
  };
}

/**
 * Redaction of a stream of text (a command's output): whole lines only, so a
 * key split across two chunks is still caught. A line longer than `maxLine`
 * is let out redacted as it is, so memory stays bounded.
 */
export class LineRedactor {
  #held = '';

  constructor(
    private readonly secrets: SecretSet,
    private readonly maxLine = 65_536,
  ) {}

  /** The redacted complete lines that `chunk` finishes ('' while a line is still open). */
  push(chunk: string): string {
    this.#held += chunk;
    const end = this.#held.lastIndexOf('\n');
    let out = '';
    if (end !== -1) {
      out = this.secrets.redact(this.#held.slice(0, end + 1));
      this.#held = this.#held.slice(end + 1);
    }
    if (this.#held.length > this.maxLine) out += this.flush();
    return out;
  }

  /** Whatever is held, redacted. */
  flush(): string {
    const text = this.#held;
    this.#held = '';
    return text === '' ? '' : this.secrets.redact(text);
  }
}

/**
 * The secrets every process knows without asking, from its environment:
 * `OPENAI_API_KEY`, the value of every variable whose name looks like a
 * credential (looksLikeCredentialName), and the password of every URL in any
 * value (`DATABASE_URL=postgres://u:p@h/db`). `apiKeys` are keys handed over
 * as plain strings (the one from SecretStorage): they join as "the API key"
 * unless the environment already named them.
 */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env, apiKeys: Iterable<string | undefined> = []): SecretSet {
  const set = new SecretSet();
  set.add(env.OPENAI_API_KEY, 'OPENAI_API_KEY');
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (looksLikeCredentialName(name)) set.add(value, name);
    for (const password of urlPasswords(value)) set.add(password, `the password in ${name}`);
  }
  for (const key of apiKeys) set.add(key, 'the API key');
  return set;
}

function redactValue(value: unknown, one: (text: string) => string): unknown {
  if (typeof value === 'string') return one(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, one));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = redactValue(inner, one);
    return out;
  }
  return value;
}
