import { formatLocalServer, isLoopbackHost, serverPlace, type LocalServer } from './localServers';

/**
 * The pure decisions of Select Model's "Add a port…" and "Use a base URL…"
 * (docs/architecture.md, "Local model servers"): whether what the user typed
 * can be used, and the user's `candor.localServers` with the new entry.
 */

export type PortInput =
  | { readonly port: number }
  | { readonly problem: string };

/**
 * What the user typed as a port: `18200`, `:18200`, `127.0.0.1:18200`,
 * `localhost:18200` or a loopback URL (`http://127.0.0.1:18200/v1`). Another
 * host is refused with the way to reach it (a base URL), and so is a port the
 * setting already lists, with what it says of it.
 */
export function parsePortInput(text: string, listed: readonly LocalServer[]): PortInput {
  const typed = text.trim();
  if (typed === '') return { problem: 'Type the port the server listens on, such as 18200.' };
  if (typed.length > 200) return { problem: 'That is too long for a port: type a number such as 18200.' };
  const where = hostAndPort(typed);
  if (!where) return { problem: `"${clipTyped(typed)}" is not a port: type a number from 1 to 65535, such as 18200.` };
  if (where.host !== undefined && !isLoopbackHost(where.host)) {
    return { problem: `Candor looks for local servers on 127.0.0.1 only. For a server on ${where.host}, use "Use a base URL…" instead.` };
  }
  const port = Number(where.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { problem: `${where.port} is not a port: ports go from 1 to 65535.` };
  const known = listed.find((s) => s.port === port);
  if (known) {
    return { problem: `Port ${port} is already in candor.localServers (${serverPlace(known)}); if its models are not listed, nothing answered there when Select Model opened.` };
  }
  return { port };
}

function hostAndPort(typed: string): { readonly host?: string; readonly port: string } | undefined {
  if (/^\d+$/.test(typed)) return { port: typed };
  const bare = /^:(\d+)$/.exec(typed);
  if (bare?.[1]) return { port: bare[1] };
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `http://${typed}`);
  } catch {
    return undefined;
  }
  // A URL without a port (http://localhost/v1) names no server Candor could probe by port.
  if (url.port === '' || !/^https?:$/.test(url.protocol)) return undefined;
  return { host: url.hostname, port: url.port };
}

function clipTyped(typed: string): string {
  return typed.length > 40 ? `${typed.slice(0, 40)}…` : typed;
}

/**
 * The user's `candor.localServers` with one entry more: the user's own list
 * as it is (every entry kept, in whatever form it was written), or, when the
 * user has none, the defaults it replaces (a user value replaces the default
 * list whole), then the new entry in the string form.
 */
export function withServerAdded(userValue: unknown, defaultValue: unknown, server: LocalServer): unknown[] {
  const base = Array.isArray(userValue) ? userValue : Array.isArray(defaultValue) ? defaultValue : [];
  return [...base, formatLocalServer(server)];
}

/**
 * Why a typed base URL cannot be used, or undefined when it can: an http or
 * https URL, with no user or password in it (a key belongs in secret storage,
 * never in settings) and no query or fragment (the API's paths are added to it).
 */
export function baseUrlProblem(text: string): string | undefined {
  const typed = text.trim();
  if (typed === '') return 'Type the base URL of an OpenAI-compatible API, such as http://127.0.0.1:8081/v1.';
  // `localhost:1234/v1` parses as a URL of the scheme "localhost:": without "://" it is a URL missing its scheme.
  let url: URL | undefined;
  try {
    url = /^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? new URL(typed) : undefined;
  } catch {
    url = undefined;
  }
  if (!url) return `"${clipTyped(typed)}" is not a URL: type it whole, with http:// or https://, such as http://127.0.0.1:8081/v1.`;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Candor talks to a provider over http or https, not ${url.protocol.replace(/:$/, '')}.`;
  if (url.username !== '' || url.password !== '') return 'Leave the user and password out of the URL: settings are not secret. Run "Candor: Set API Key" for the key.';
  if (url.search !== '' || url.hash !== '') return 'Leave out the part after ? or #: Candor adds the API\'s paths (/models, /chat/completions) to the base URL.';
  return undefined;
}
