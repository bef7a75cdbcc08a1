import { KindError } from '../kindError';
import { redact } from '../redact';

/**
 * Why a GitHub request did not give what was asked. Each message names the
 * fix; none holds the token (docs/architecture.md, "Secrets").
 */
export type GitHubErrorKind =
  /** The token is missing, expired or revoked (HTTP 401). */
  | 'auth'
  /** The token lacks a scope or permission the request needs (HTTP 403). */
  | 'scope'
  /** GitHub's rate limit, still in force after the bounded waits. */
  | 'rate-limit'
  /** HTTP 404: the repository or branch does not exist, or the token cannot see it. */
  | 'not-found'
  /** HTTP 422: a pull request already exists for the branch. */
  | 'exists'
  /** The remote is not on GitHub, or no API URL is set for its host. */
  | 'not-github'
  /** Any other answer GitHub gave, or one Candor would not follow. */
  | 'http'
  /** GitHub could not be reached, or did not answer in time. */
  | 'network';

export class GitHubError extends KindError<GitHubErrorKind> {
  override readonly name: string = 'GitHubError';
  constructor(
    kind: GitHubErrorKind,
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(kind, message, options);
  }
}

/** What fixes a missing or refused token, unless the caller says otherwise. */
export const DEFAULT_AUTH_FIX = 'Run "Candor: Set GitHub Token" (the CLI reads GITHUB_TOKEN).';

/** An HTTP answer that was not a success: what the error mapping needs of it. */
export interface FailedAnswer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** GitHub's `message` (and the messages of its `errors`), as it sent them. */
  readonly message: string;
}

export interface ErrorContext {
  /** What was asked, for people: `open a pull request on owner/repo`. */
  readonly what: string;
  readonly token: string;
  readonly authFix: string;
}

/**
 * The GitHubError for a failed answer (rate limits are decided before, see
 * rateLimit.ts). GitHub's own words are kept, with the token redacted in
 * case an answer ever echoes it.
 */
export function errorForAnswer(answer: FailedAnswer, context: ErrorContext): GitHubError {
  const words = clause(redact(answer.message, [context.token]));
  const { status } = answer;
  const make = (kind: GitHubErrorKind, text: string): GitHubError => new GitHubError(kind, redact(text, [context.token]), status);
  if (status === 401) return make('auth', `GitHub refused the token (HTTP 401: ${words || 'Bad credentials'}): it is missing, expired or revoked. ${context.authFix}`);
  if (status === 403) {
    const scope = missingScope(answer.headers);
    if (scope !== undefined) return make('scope', `GitHub refused to ${context.what} (HTTP 403): ${scope} ${context.authFix}`);
    if (/not accessible/i.test(words)) return make('scope', `GitHub refused to ${context.what} (HTTP 403: ${words}): the token lacks a permission this needs (a classic token needs the "repo" scope). ${context.authFix}`);
    return make('http', `GitHub refused to ${context.what} (HTTP 403: ${words || 'Forbidden'}).`);
  }
  if (status === 404) return make('not-found', `GitHub could not ${context.what} (HTTP 404): it does not exist, or the token cannot see it (a private repository needs the "repo" scope).`);
  if (status === 422 && /already exists/i.test(words)) return make('exists', `GitHub says a pull request already exists (HTTP 422: ${words}).`);
  return make('http', `GitHub could not ${context.what} (HTTP ${status}${words ? `: ${words}` : ''}).`);
}

/**
 * The scope or permission a 403 names, as a sentence; undefined when the
 * answer names none. A classic token's answer says which scopes would do
 * (`x-accepted-oauth-scopes`) and which it has (`x-oauth-scopes`); a
 * fine-grained token's says the permissions (`x-accepted-github-permissions`).
 */
function missingScope(headers: FailedAnswer['headers']): string | undefined {
  const accepted = list(headers['x-accepted-oauth-scopes']);
  const has = list(headers['x-oauth-scopes']);
  if (accepted.length > 0 && !accepted.some((scope) => has.includes(scope))) {
    const had = has.length > 0 ? `it has ${quoted(has)}` : 'it has none';
    return `the token lacks the scope this needs: ${quoted(accepted, ' or ')} (${had}).`;
  }
  const permissions = list(headers['x-accepted-github-permissions'], ';');
  if (permissions.length > 0) return `the token lacks the permission this needs: ${quoted(permissions, ' or ')}.`;
  return undefined;
}

function list(value: string | undefined, separator = ','): string[] {
  return (value ?? '')
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function quoted(items: readonly string[], joiner = ', '): string {
  return items.map((item) => `"${item}"`).join(joiner);
}

/** Text to put inside a sentence of ours: one line, no full stop of its own, bounded. */
function clause(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim().replace(/[.!]+$/u, '');
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
