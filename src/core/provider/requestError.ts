import { KindError } from '../kindError';
import type { Overflow } from './overflow';

/** Why a request did not complete. The chat shows each kind with its own words. */
export type RequestErrorKind =
  | 'connection' // refused, reset before the reply, DNS
  | 'http' // the provider answered with an error status
  | 'idle-timeout' // nothing arrived for idleTimeoutSeconds once the reply had started
  | 'first-token-timeout' // nothing live arrived for firstTokenTimeoutSeconds after the request
  | 'stream-error' // the server put an error object in the stream and ended it
  | 'length' // a one-shot reply that had to be whole was cut at the output limit
  | 'cut' // the stream ended before finish_reason
  | 'malformed' // a chunk that is not JSON
  | 'cancelled'; // the user pressed Stop

export class RequestError extends KindError<RequestErrorKind> {
  override readonly name: string = 'RequestError';
  constructor(
    kind: RequestErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
    /** The URL the request went to, when it reached the network: the chat shows it. */
    readonly url?: string,
    /** The provider said the request does not fit its context window (overflow.ts), with its figures. */
    readonly overflow?: Overflow,
  ) {
    super(kind, message);
  }

  /** The contract: Candor retries 429, 5xx and connection errors, nothing else. */
  get retryable(): boolean {
    if (this.kind === 'connection') return true;
    if (this.kind === 'http' && this.status !== undefined) return this.status === 429 || this.status >= 500;
    return false;
  }

  /** One line for the chat, with the next step where there is one. */
  describe(): string {
    switch (this.kind) {
      case 'connection':
        return `Could not reach the provider${this.url ? ` at ${this.url}` : ''} (${clause(this.message)}). Check candor.baseUrl and that the server is running.`;
      case 'http':
        return describeStatus(this.status, providerText(this.message, this.status), this.url);
      case 'idle-timeout':
        return `The provider sent nothing for ${this.message} in the middle of its reply; the request was cut (candor.request.idleTimeoutSeconds).`;
      case 'first-token-timeout':
        return `The provider sent nothing for ${this.message} after the request; it was cut (candor.request.firstTokenTimeoutSeconds). A long prompt on a slow machine can take that long before the first word: raise the setting, or set it to 0 for no limit.`;
      case 'stream-error':
        return `The provider reported an error in the middle of its reply: ${clause(this.message)}.`;
      case 'length':
        return `The reply was cut at the output limit (${this.message}) before it was complete.`;
      case 'cut':
        return 'The reply stream ended before it was complete. The partial reply is kept; Retry sends the request again.';
      case 'malformed':
        return `The provider sent a chunk Candor could not read (${this.message}).`;
      case 'cancelled':
        return 'Stopped.';
    }
  }
}

function describeStatus(status: number | undefined, message: string, url: string | undefined): string {
  const at = url ? ` for ${url}` : '';
  switch (status) {
    case 401:
    case 403:
      return `The provider refused the API key (HTTP ${status}${at}). Run "Candor: Set API Key".`;
    case 404:
      return `The provider answered HTTP 404 (not found)${at}: ${clause(message)}. ${notFoundHint(url)}`;
    case 429:
      return `The provider is rate limiting (HTTP 429: ${clause(message)}).`;
    default:
      return `The provider answered HTTP ${status ?? '?'}: ${clause(message)}${url ? ` (${url})` : ''}.`;
  }
}

/**
 * A 404 is a wrong path or a model the provider does not have. Most
 * OpenAI-compatible servers serve the API under `/v1`: a base URL without it
 * is the usual wrong path.
 */
function notFoundHint(url: string | undefined): string {
  if (url !== undefined && missesV1(url)) return 'Is /v1 missing from candor.baseUrl? Most servers serve the API under …/v1. Otherwise run "Candor: Select Model".';
  return 'Check the model id: run "Candor: Select Model".';
}

/** Whether the path of a request URL has no `/v1` segment (`http://host:8080/chat/completions`). */
export function missesV1(url: string): boolean {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return false;
  }
  return !/(^|\/)v1(\/|$)/.test(pathname);
}

/** The provider's words, without the status the SDK puts in front of a plain-text body ("404 404 page not found"). */
function providerText(message: string, status: number | undefined): string {
  return status === undefined ? message : message.replace(new RegExp(`^${status}\\s+`), '');
}

/** Text to put in a sentence of ours: no full stop of its own ("Connection error." in parentheses, then ours). */
function clause(text: string): string {
  return text.trim().replace(/[.!。]+$/u, '');
}

/** Thrown with what arrived before the failure, so the chat can keep it. */
export class PartialReplyError extends RequestError {
  constructor(cause: RequestError, readonly partial: string) {
    super(cause.kind, cause.message, cause.status, cause.retryAfterMs, cause.url, cause.overflow);
  }
}
