import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, httpStatus } from './errors';
import { MAX_MESSAGE_BYTES } from './limits';
import type { ExpandedServer } from './types';

/**
 * The HTTP transports (docs/architecture.md, "MCP"), both the SDK's own:
 * Streamable HTTP, and the legacy HTTP+SSE transport for servers that
 * predate it. `auto` (a definition with a `url` and no `type`) tries
 * Streamable HTTP first and falls back to SSE when initialize gets a 4xx,
 * as the SDK documents for backwards compatibility; a 401 is not a reason to
 * fall back but a server that wants sign-in. No auth provider is given, so
 * the SDK never starts an OAuth flow.
 */

type RemoteServer = Extract<ExpandedServer, { type: 'http' | 'sse' | 'auto' }>;
export type RemoteKind = 'streamable-http' | 'sse';

/** The transports to try for `server`, in order. */
export function remoteKinds(server: RemoteServer): readonly RemoteKind[] {
  switch (server.type) {
    case 'http':
      return ['streamable-http'];
    case 'sse':
      return ['sse'];
    case 'auto':
      return ['streamable-http', 'sse'];
  }
}

/** Whether a failed Streamable HTTP initialize means "try the SSE transport": any 4xx but 401. */
export function fallsBackToSse(err: unknown): boolean {
  const status = httpStatus(err);
  return status !== undefined && status >= 400 && status < 500 && status !== 401;
}

export function remoteTransport(server: RemoteServer, kind: RemoteKind, maxMessageBytes = MAX_MESSAGE_BYTES): Transport {
  const url = serverUrl(server);
  const options = { requestInit: { headers: { ...server.headers } }, fetch: boundedFetch(server.name, maxMessageBytes) };
  return kind === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, options);
}

function serverUrl(server: RemoteServer): URL {
  let url: URL;
  try {
    url = new URL(server.url);
  } catch {
    throw new McpError('start', `its URL is not valid: ${server.url.slice(0, 200)}`, server.name);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpError('start', `its URL must start with http:// or https://, not ${url.protocol}//`, server.name);
  return url;
}

/**
 * fetch, with the body of every answer to a POST (the answers to Candor's
 * own messages) cut off past `maxBytes`: a server cannot make Candor hold an
 * answer of any size. The long-lived GET stream of notifications is left
 * alone. Redirects and bodiless answers pass as they are.
 */
function boundedFetch(server: string, maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method !== 'POST' || response.body === null || response.status < 200 || response.status >= 300) return response;
    return new Response(capped(response.body, maxBytes, server), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function capped(body: ReadableStream<Uint8Array>, maxBytes: number, server: string): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen <= maxBytes) controller.enqueue(chunk);
        else controller.error(new McpError('protocol', `the server sent an answer larger than ${Math.round(maxBytes / (1024 * 1024))} MiB, the most Candor reads`, server));
      },
    }),
  );
}
