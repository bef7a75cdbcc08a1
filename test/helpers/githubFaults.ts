// The faults the fake GitHub can answer with instead of the real thing,
// each as GitHub sends it (status, headers, body).
import { errorBody } from './githubFixtures';

export type Fault =
  /** The token is expired or revoked. */
  | { readonly kind: 'unauthorized' }
  /** A classic token without the scope: `x-accepted-oauth-scopes` says which would do. */
  | { readonly kind: 'missing-scope'; readonly accepted: string; readonly has: string }
  /** A rate limit with `Retry-After` (seconds) or `x-ratelimit-reset` (epoch seconds). */
  | { readonly kind: 'rate-limit'; readonly status: 403 | 429; readonly retryAfter?: number; readonly resetAt?: number }
  /** Any status with GitHub's error body. */
  | { readonly kind: 'status'; readonly status: number; readonly message: string }
  /** A canned answer (still checked against the schema). */
  | { readonly kind: 'respond'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'redirect'; readonly status: 301 | 302 | 307; readonly location: string }
  /** No answer at all, until the fake is closed. */
  | { readonly kind: 'hang' }
  /** The real answer, changed by `edit` before it is sent (and checked). */
  | { readonly kind: 'tamper'; readonly edit: (body: unknown) => unknown };

export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

/** The answer a fault gives, or `undefined` for `hang` and `tamper` (the server handles those itself). */
export function faultAnswer(fault: Fault): Answer | undefined {
  switch (fault.kind) {
    case 'unauthorized':
      return { status: 401, body: errorBody('Bad credentials', 401) };
    case 'missing-scope':
      return {
        status: 403,
        headers: { 'x-accepted-oauth-scopes': fault.accepted, 'x-oauth-scopes': fault.has },
        body: errorBody('Resource not accessible by personal access token', 403),
      };
    case 'rate-limit': {
      const headers: Record<string, string> = { 'x-ratelimit-limit': '5000', 'x-ratelimit-used': '5000', 'x-ratelimit-resource': 'core' };
      if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      if (fault.resetAt !== undefined) {
        headers['x-ratelimit-remaining'] = '0';
        headers['x-ratelimit-reset'] = String(fault.resetAt);
      }
      return { status: fault.status, headers, body: errorBody('API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.', fault.status) };
    }
    case 'status':
      return { status: fault.status, body: errorBody(fault.message, fault.status) };
    case 'respond':
      return { status: fault.status, body: fault.body };
    case 'redirect':
      return { status: fault.status, headers: { location: fault.location } };
    case 'hang':
    case 'tamper':
      return undefined;
  }
}
