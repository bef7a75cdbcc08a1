/**
 * The one redaction pass (docs/architecture.md, "Secrets"): everything Candor
 * persists, logs, prints or posts to a webview goes through `redact` first.
 * It removes the API key wherever it appears, and any `Authorization` or
 * `Bearer` value, whoever's key it is.
 */
import type { Logger } from './log';

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

/** `text` with every known secret and every credential-looking value replaced by `[redacted]`. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  return maskSecrets(text, secretForms(secrets))
    .replace(BEARER, (_m, word: string, space: string) => `${word}${space}${REDACTED}`)
    .replace(CREDENTIAL_FIELD, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`)
    .replace(SK_KEY, REDACTED);
}

/** Each usable secret as it may appear in text: raw, escaped inside a JSON string, percent-encoded in a URL. */
function secretForms(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
    forms.add(encodeURIComponent(secret));
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

/**
 * The secrets of this process: the key from SecretStorage once read, and the
 * environment's `OPENAI_API_KEY`. One instance is shared by everything that
 * writes, logs or posts, so a key set later is redacted from then on.
 */
export class SecretSet {
  readonly #values = new Set<string>();

  constructor(initial: Iterable<string | undefined> = []) {
    for (const value of initial) this.add(value);
  }

  /** Adds a secret; empty and too-short values are ignored (never a pattern). */
  add(value: string | undefined): void {
    if (typeof value === 'string' && value.trim().length >= MIN_SECRET_LENGTH) this.#values.add(value.trim());
  }

  values(): string[] {
    return [...this.#values];
  }

  redact(text: string): string {
    return redact(text, this.#values);
  }

  /** The same object with every string inside passed through `redact` (for records and webview messages). */
  redactDeep<T>(value: T): T {
    return redactValue(value, (text) => this.redact(text)) as T;
  }
}

/** A logger that redacts every line before `sink` sees it, with the secrets known at the time of the call. */
export function redactingLogger(sink: Logger, secrets: SecretSet): Logger {
  return {
    trace: (m) => sink.trace(secrets.redact(m)),
    info: (m) => sink.info(secrets.redact(m)),
    warn: (m) => sink.warn(secrets.redact(m)),
    error: (m) => sink.error(secrets.redact(m)),
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

/** The secrets every process knows without asking: the environment's key. */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env): SecretSet {
  return new SecretSet([env.OPENAI_API_KEY]);
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
