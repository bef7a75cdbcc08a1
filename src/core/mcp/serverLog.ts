import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import { clip } from '../text';

/** The longest line of a server's output that reaches the log. */
const LOG_LINE_CHARS = 1000;

/** Lines of one stream let through per window; the rest are counted and the count is logged with the next line that passes. */
const LINES_PER_WINDOW = 200;
const WINDOW_MS = 10_000;

/**
 * What a server writes on stderr (and whatever garbage it writes on stdout)
 * in Candor's log: one log line per line, prefixed with the server's name,
 * redacted, clipped to LOG_LINE_CHARS, and at most LINES_PER_WINDOW lines per
 * ten seconds, so a server that chatters cannot flood the log.
 */
export class ServerLog {
  #windowStart = 0;
  #inWindow = 0;
  #dropped = 0;
  /** The last few lines, for the message of a server that dies while starting. */
  readonly #recent: string[] = [];

  constructor(
    private readonly log: Logger,
    private readonly secrets: SecretSet,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** One line from the server; `what` says which stream ("stderr", "stdout, not JSON-RPC"). */
  line(text: string, what: string, level: 'info' | 'warn' = 'info'): void {
    // Redact a little more than is shown: a secret cut at the edge is still caught whole.
    const shown = clip(this.secrets.redact(text.slice(0, LOG_LINE_CHARS * 2).replace(/\r$/, '')), LOG_LINE_CHARS);
    if (shown.trim() === '') return;
    this.#remember(shown);
    if (!this.#admit()) return;
    const note = this.#dropped > 0 ? ` (${this.#dropped} earlier lines not logged)` : '';
    this.#dropped = 0;
    this.log[level](`${this.prefix} ${what}${note}: ${shown}`);
  }

  /** The last lines seen (redacted and clipped), oldest first. */
  recent(): readonly string[] {
    return this.#recent;
  }

  #remember(line: string): void {
    this.#recent.push(line);
    if (this.#recent.length > 5) this.#recent.shift();
  }

  #admit(): boolean {
    const now = this.now();
    if (now - this.#windowStart >= WINDOW_MS) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    if (this.#inWindow >= LINES_PER_WINDOW) {
      this.#dropped++;
      return false;
    }
    this.#inWindow++;
    return true;
  }
}
