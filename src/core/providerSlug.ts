/**
 * The provider slug of a base URL, exactly as design §1 says: the lowercase
 * host, plus `-PORT` when the URL gives a port other than its scheme's
 * default (80 for http, 443 for https), with every run of characters other
 * than a-z0-9 replaced by `-`. Writing the default port out is therefore not
 * a switch. An empty base URL is the embedded offline provider.
 *
 * The authority is parsed by hand instead of with `URL`, which would rewrite
 * hosts (punycode); the slug must not guess. Edge cases keep the literal
 * rule: `[::1]:8080` gives `-1-8080`, a fully qualified `example.com.` gives
 * `example-com-`.
 */
export function providerSlug(baseUrl: string): string {
  const trimmed = baseUrl.trim();
  if (trimmed === '') return 'offline';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1]?.toLowerCase();
  const { host, port } = splitAuthority(authorityOf(trimmed));
  const raw = port && port !== DEFAULT_PORTS[scheme ?? ''] ? `${host}-${port}` : host;
  return raw.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };

/**
 * A slug stored by an earlier version, which kept a default port written
 * out (`api-openai-com-443`), read against the slug in use now: the same
 * provider when only that suffix differs. Matching against the current slug
 * rather than stripping the suffix keeps a host such as `10.0.0.80` intact.
 */
export function normalizeSlug(stored: string, current: string): string {
  return stored === `${current}-443` || stored === `${current}-80` ? current : stored;
}

function authorityOf(url: string): string {
  const afterScheme = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const authority = afterScheme.split(/[/?#]/, 1)[0] ?? '';
  const at = authority.lastIndexOf('@');
  // user:password@ is never part of the identity (and must not reach a log).
  return at >= 0 ? authority.slice(at + 1) : authority;
}

function splitAuthority(authority: string): { host: string; port: string } {
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close > 0) {
      const rest = authority.slice(close + 1);
      return { host: authority.slice(0, close + 1), port: rest.startsWith(':') ? rest.slice(1) : '' };
    }
  }
  const colon = authority.lastIndexOf(':');
  if (colon < 0) return { host: authority, port: '' };
  return { host: authority.slice(0, colon), port: authority.slice(colon + 1) };
}
