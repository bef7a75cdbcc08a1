import { GitHubError } from './errors';

/** Where a git remote is on a GitHub-shaped host. */
export interface GitHubRemote {
  /** Lower case, without port or user. */
  readonly host: string;
  readonly owner: string;
  readonly repo: string;
}

export const GITHUB_API_URL = 'https://api.github.com';

/** A GitHub login: letters, digits and single hyphens, at most 39. */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
/** A repository name: letters, digits, `.`, `_`, `-`; never `.` or `..`. */
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
/** The URL schemes git speaks to a server with. */
const SCHEMES = new Set(['https:', 'http:', 'ssh:', 'git+ssh:', 'ssh+git:', 'git:']);
/** scp-like `[user@]host:owner/repo`: the host has no slash, and is more than a drive letter. */
const SCP_LIKE = /^(?:[^@/\s]+@)?([^@/:\s]{2,}):(?!\/\/)\/?([^\s]+)$/;

/**
 * The host, owner and repository of a remote URL as git writes them:
 * `https://github.com/o/r(.git)`, `git@github.com:o/r.git`,
 * `ssh://git@github.com/o/r.git` (and `ssh.github.com:443`). Undefined for a
 * local path, `file://`, or a path that is not exactly `owner/repo` (a
 * GitLab subgroup, say). Any user or password in the URL is dropped, never
 * returned.
 */
export function parseGitHubRemote(url: string): GitHubRemote | undefined {
  const text = url.trim();
  const located = urlForm(text) ?? scpForm(text);
  if (located === undefined) return undefined;
  const segments = located.path.replace(/^\/+/, '').replace(/\/+$/, '').split('/');
  if (segments.length !== 2) return undefined;
  const owner = segments[0] ?? '';
  const repo = (segments[1] ?? '').replace(/\.git$/i, '');
  if (!OWNER.test(owner) || !REPO.test(repo) || repo === '.' || repo === '..') return undefined;
  const host = isGitHubHost(located.host) ? 'github.com' : located.host;
  return { host, owner, repo };
}

function urlForm(text: string): { host: string; path: string } | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return undefined;
  }
  if (!SCHEMES.has(parsed.protocol) || parsed.hostname === '' || parsed.search !== '' || parsed.hash !== '') return undefined;
  try {
    return { host: parsed.hostname.toLowerCase(), path: decodeURIComponent(parsed.pathname) };
  } catch {
    return undefined; // not valid percent-encoding
  }
}

function scpForm(text: string): { host: string; path: string } | undefined {
  const match = SCP_LIKE.exec(text);
  if (!match) return undefined;
  return { host: (match[1] ?? '').toLowerCase(), path: match[2] ?? '' };
}

/** github.com itself, as git may name it (`www.`, and `ssh.` for SSH over port 443). */
export function isGitHubHost(host: string): boolean {
  return ['github.com', 'www.github.com', 'ssh.github.com'].includes(host.trim().toLowerCase().replace(/\.$/, ''));
}

/**
 * The API URL for a remote's host: `candor.github.apiUrl` when it is set
 * (and sound, see checkApiUrl), else `https://api.github.com` for
 * github.com; for any other host, the reason there is none (the
 * `not-github` error's words).
 */
export function resolveApiUrl(host: string, configured?: string): { readonly apiUrl: string } | { readonly reason: string } {
  if (configured !== undefined && configured.trim() !== '') return checkApiUrl(configured.trim());
  if (isGitHubHost(host)) return { apiUrl: GITHUB_API_URL };
  return { reason: `The remote is on ${host}, not github.com: set candor.github.apiUrl to its GitHub Enterprise API URL (https://${host}/api/v3), or pass --github-api. Candor opens pull requests on GitHub only.` };
}

/** resolveApiUrl, throwing GitHubError `not-github` with the reason. */
export function requireApiUrl(host: string, configured?: string): string {
  const resolved = resolveApiUrl(host, configured);
  if ('reason' in resolved) throw new GitHubError('not-github', resolved.reason);
  return resolved.apiUrl;
}

/**
 * An API URL the token may be sent to: https (http only to this machine's
 * loopback, for a local test server), no user or password in it, no query;
 * returned without a trailing slash.
 */
export function checkApiUrl(url: string): { readonly apiUrl: string } | { readonly reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: `The GitHub API URL ${JSON.stringify(url.slice(0, 200))} is not a URL (candor.github.apiUrl, --github-api).` };
  }
  const shown = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  if (parsed.username !== '' || parsed.password !== '') return { reason: `The GitHub API URL must not hold a user or password (${shown}): the token is sent in a header.` };
  if (parsed.search !== '' || parsed.hash !== '') return { reason: `The GitHub API URL must not have a query or fragment (${shown}).` };
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) return { reason: `The GitHub API URL must use https (${shown}): the token must not travel in the clear. Only a server on this machine (127.0.0.1) may use http.` };
  return { apiUrl: `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}` };
}
