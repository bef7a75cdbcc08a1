import { GitHubError } from './errors';

export type Fetch = typeof globalThis.fetch;

export interface GuardedFetchOptions {
  readonly apiUrl: string;
  readonly token: string;
  readonly fetch?: Fetch;
  /** One request, its answer's body included; then it is cut. */
  readonly timeoutMs: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses whose answer has no body: a Response with one cannot be built. */
const NO_BODY = new Set([101, 103, 204, 205, 304]);
const MAX_REDIRECTS = 3;

/**
 * The one place the token goes out (docs/architecture.md, "Secrets"): a
 * fetch that adds `Authorization` only to a URL under `apiUrl` (same
 * origin, same path prefix) and refuses any other. Redirects are followed by
 * hand, each one checked the same way, so no redirect carries the token to
 * another host; the client library never sees the token at all.
 */
export function guardedFetch(options: GuardedFetchOptions): Fetch {
  const base = new URL(options.apiUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const underApi = (url: URL): boolean => url.origin === base.origin && (url.pathname === prefix || url.pathname.startsWith(`${prefix}/`));
  const send = options.fetch ?? globalThis.fetch;
  return async (input, init) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    let request: RequestInit = { ...init };
    for (let redirects = 0; ; redirects++) {
      if (!underApi(url)) throw new GitHubError('http', `Candor did not send a request to ${url.origin}${url.pathname}: it is not under the GitHub API URL ${base.origin}${prefix}, and only that gets the token.`);
      const answer = await sendOnce(send, url, request, options);
      const location = answer.headers.get('location');
      if (!REDIRECTS.has(answer.status) || location === null) return answer;
      await answer.body?.cancel();
      if (redirects >= MAX_REDIRECTS) throw new GitHubError('http', `GitHub redirected more than ${MAX_REDIRECTS} times (${url.pathname}); Candor stopped following.`, answer.status);
      const next = new URL(location, url);
      if (!underApi(next)) throw new GitHubError('http', `GitHub redirected ${url.pathname} to ${next.origin}${next.pathname}, outside the GitHub API URL: Candor does not follow it, so the token stays with ${base.origin}.`, answer.status);
      if (answer.status === 303) request = { ...request, method: 'GET', body: undefined };
      url = next;
    }
  };
}

async function sendOnce(send: Fetch, url: URL, init: RequestInit, options: GuardedFetchOptions): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.delete('authorization');
  headers.set('authorization', `Bearer ${options.token}`);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    const answer = await send(url, { ...init, headers, signal, redirect: 'manual' });
    // The body is read later, by the client library; read it here so that
    // the timeout covers it and a stalled body is cut too.
    const body = await answer.arrayBuffer();
    return new Response(NO_BODY.has(answer.status) ? null : body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  } catch (err) {
    if (timeout.aborted) throw new GitHubError('network', `GitHub did not answer within ${Math.round(options.timeoutMs / 1000)} s (${url.origin}${url.pathname}).`, undefined, { cause: err });
    if (init.signal?.aborted) throw err;
    throw new GitHubError('network', `Could not reach GitHub at ${url.origin} (${causeText(err)}). Check the network and the GitHub API URL.`, undefined, { cause: err });
  }
}

/** The lowest cause's message: fetch says "fetch failed" and hides ECONNREFUSED in its cause. */
function causeText(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause instanceof Error; depth++) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
