/**
 * What the user confirmed, and what the confirmation shows
 * (docs/architecture.md, "MCP"). A workspace definition starts only after
 * the user has seen what it runs; the hash of what they saw is kept in the
 * workspace state, and any change to the definition, as written or as
 * expanded, asks again. The hash is over a canonical JSON (sorted keys), and
 * a secret's place in it holds the secret's own SHA-256, never the secret.
 * Of an expanded server's environment only what the definition sets counts:
 * a new PATH or TERM on the host does not ask again.
 */
import { createHash } from 'node:crypto';
import { looksLikeCredentialName } from '../redact';
import { MASK, quoteName, shellQuote } from './display';
import { isCredentialHeader, isCredentialParameter, urlSecrets } from './secrets';
import type { ExpandedServer, McpServerDefinition } from './types';

export function definitionHash(def: McpServerDefinition, expanded?: ExpandedServer, secrets: readonly string[] = []): string {
  const guard = (value: string, secretField = false): unknown => (secretField || holdsAny(value, secrets) ? { sha256: sha256(value) } : value);
  const document = { version: 1, written: writtenForm(def, guard), expanded: expanded === undefined ? null : expandedForm(expanded, guard) };
  return sha256(canonicalJson(document));
}

type Guard = (value: string, secretField?: boolean) => unknown;

function writtenForm(def: McpServerDefinition, guard: Guard): unknown {
  if (def.type === 'stdio') {
    return {
      name: def.name,
      source: def.source,
      type: def.type,
      command: guard(def.command),
      args: def.args.map((arg) => guard(arg)),
      env: mapValues(def.env, (name, value) => guard(value, looksLikeCredentialName(name))),
      envFile: def.envFile === undefined ? null : guard(def.envFile),
      cwd: def.cwd === undefined ? null : guard(def.cwd),
    };
  }
  return { name: def.name, source: def.source, type: def.type, url: guard(def.url, urlSecrets(def.url).length > 0), headers: mapValues(def.headers, (name, value) => guard(value, isCredentialHeader(name))) };
}

function expandedForm(server: ExpandedServer, guard: Guard): unknown {
  if (server.type === 'stdio') {
    const defined = server.definedEnv ?? Object.keys(server.env);
    const env = Object.fromEntries(defined.map((name) => [name, guard(server.env[name] ?? '', looksLikeCredentialName(name))]));
    return { name: server.name, type: server.type, command: guard(server.command), args: server.args.map((arg) => guard(arg)), env, cwd: server.cwd === undefined ? null : guard(server.cwd) };
  }
  return { name: server.name, type: server.type, url: guard(server.url, urlSecrets(server.url).length > 0), headers: mapValues(server.headers, (name, value) => guard(value, isCredentialHeader(name))) };
}

function mapValues(record: Readonly<Record<string, string>>, f: (name: string, value: string) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [name, f(name, value)]));
}

/** JSON with every object's keys sorted, so the same definition written in another order hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, inner]) => inner !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Whether `value` is one of `secrets` or holds one of at least 4 characters. */
function holdsAny(value: string, secrets: readonly string[]): boolean {
  return secrets.some((secret) => secret !== '' && (value === secret || (secret.length >= 4 && value.includes(secret))));
}

/**
 * The lines of the confirmation dialog. A local server: its command line as
 * a shell would need it typed (a newline shows as `\n`), its folder, and each
 * variable the definition sets; a remote one: its URL and the names of its
 * headers. Every secret shows as `••••`.
 */
export function describeForConfirmation(expanded: ExpandedServer, secrets: readonly string[]): string[] {
  const hide = (text: string): string => maskSecrets(text, secrets);
  if (expanded.type === 'stdio') {
    const lines = [[expanded.command, ...expanded.args].map((word) => shellQuote(hide(word))).join(' ')];
    if (expanded.cwd !== undefined) lines.push(`in ${shellQuote(hide(expanded.cwd))}`);
    for (const name of expanded.definedEnv ?? []) {
      const value = looksLikeCredentialName(name) ? MASK : hide(expanded.env[name] ?? '');
      lines.push(`with ${shellQuote(name)}=${shellQuote(value)}`);
    }
    return lines;
  }
  const lines = [`${TRANSPORT[expanded.type]} ${maskUrl(expanded.url, secrets)}`];
  const headerNames = Object.keys(expanded.headers);
  if (headerNames.length > 0) lines.push(`headers: ${headerNames.map((name) => quoteName(name)).join(', ')}`);
  return lines;
}

const TRANSPORT = { http: 'HTTP', sse: 'SSE', auto: 'HTTP (or SSE)' } as const;

/** Every occurrence of a secret (a whole value of any length, a part of at least 4 characters) as the mask, longest first. */
function maskSecrets(text: string, secrets: readonly string[]): string {
  if (secrets.includes(text) && text !== '') return MASK;
  const parts = [...new Set(secrets.filter((secret) => secret.length >= 4))].sort((a, b) => b.length - a.length);
  return parts.reduce((masked, secret) => masked.replaceAll(secret, MASK), text);
}

/** The URL with its password and credential-looking query values masked, and any other secret in it too. */
function maskUrl(url: string, secrets: readonly string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return quoteName(maskSecrets(url, secrets), 400);
  }
  const user = parsed.username === '' ? '' : `${maskSecrets(parsed.username, secrets)}${parsed.password === '' ? '' : `:${MASK}`}@`;
  const query = [...parsed.searchParams]
    .map(([name, value]) => `${encodeURIComponent(name)}=${isCredentialParameter(name) || secrets.includes(value) ? MASK : encodeURIComponent(value)}`)
    .join('&');
  const shown = `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${query === '' ? '' : `?${query}`}${parsed.hash}`;
  return maskSecrets(shown, [...secrets, ...secrets.map(encodeURIComponent)]);
}
