import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat completions endpoint that answers each request with what the test
 * scripts, byte for byte: an SSE stream of the given `data:` payloads (ended
 * with `[DONE]` or not), or an HTTP error with a body. For what a real
 * server cannot be made to do on demand: an error object in the middle of a
 * stream, the error shapes of hosted APIs, OpenRouter's `reasoning` field.
 * Each request's body is kept.
 */
export type Script =
  | { readonly stream: readonly unknown[]; readonly done?: boolean }
  | { readonly status: number; readonly body: unknown };

export interface ScriptedServer {
  readonly baseUrl: string;
  /** The parsed body of every request, in order. */
  readonly bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Answers the n-th request with `scripts[n]` (the last one again after the list ends). */
export async function startScriptedServer(scripts: readonly Script[]): Promise<ScriptedServer> {
  const bodies: Array<Record<string, unknown>> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>);
      const script = scripts[Math.min(bodies.length, scripts.length) - 1];
      if (!script) return void res.end();
      if ('status' in script) {
        res.writeHead(script.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(script.body));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const data of script.stream) res.write(`data: ${JSON.stringify(data)}\n\n`);
      res.end(script.done === false ? undefined : 'data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** One `chat.completion.chunk` with a delta (and a finish reason). */
export function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] };
}
