/** Why a request did not complete. The chat shows each kind with its own words. */
export type RequestErrorKind =
  | 'connection' // refused, reset before the reply, DNS
  | 'http' // the provider answered with an error status
  | 'idle-timeout' // nothing arrived for idleTimeoutSeconds
  | 'cut' // the stream ended before finish_reason
  | 'malformed' // a chunk that is not JSON
  | 'cancelled'; // the user pressed Stop

export class RequestError extends Error {
  constructor(
    readonly kind: RequestErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'RequestError';
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
        return `Could not reach the provider (${this.message}). Check candor.baseUrl and that the server is running.`;
      case 'http':
        return describeStatus(this.status, this.message);
      case 'idle-timeout':
        return `The provider sent nothing for ${this.message}; the request was cut (candor.request.idleTimeoutSeconds).`;
      case 'cut':
        return 'The reply stream ended before it was complete. The partial reply is kept; Retry sends the request again.';
      case 'malformed':
        return `The provider sent a chunk Candor could not read (${this.message}).`;
      case 'cancelled':
        return 'Stopped.';
    }
  }
}

function describeStatus(status: number | undefined, message: string): string {
  switch (status) {
    case 401:
    case 403:
      return `The provider refused the API key (HTTP ${status}). Run "Candor: Set API Key".`;
    case 404:
      return `The provider does not know this model or path (HTTP 404: ${message}). Run "Candor: Select Model".`;
    case 429:
      return `The provider is rate limiting (HTTP 429: ${message}).`;
    default:
      return `The provider answered HTTP ${status ?? '?'}: ${message}`;
  }
}

/** Thrown with what arrived before the failure, so the chat can keep it. */
export class PartialReplyError extends RequestError {
  constructor(cause: RequestError, readonly partial: string) {
    super(cause.kind, cause.message, cause.status, cause.retryAfterMs);
  }
}
