import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A provider that refuses every request and echoes the credentials it
 * received, as a careless or hostile endpoint may: the Authorization header
 * in the error message, and the headers again in the body.
 */
export interface EchoServer {
  readonly baseUrl: string;
  /** The Authorization header of every request, in order. */
  readonly seen: string[];
  close(): Promise<void>;
}

/** A request's system prompt → the text to answer with (200, not streamed); undefined refuses it like the others. */
export type Answer = (system: string) => string | undefined;

export async function startEchoServer(status = 401, answer?: Answer): Promise<EchoServer> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const authorization = req.headers.authorization ?? '';
      seen.push(authorization);
      const text = answer?.(systemPrompt(Buffer.concat(chunks).toString('utf8')));
      if (text !== undefined) {
        const ok = JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: text } }] });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(ok);
        return;
      }
      const key = authorization.replace(/^Bearer\s+/i, '');
      const body = JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${key}. You sent Authorization: ${authorization}`,
          type: 'invalid_request_error',
          headers: { authorization },
        },
      });
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function systemPrompt(body: string): string {
  try {
    const messages = (JSON.parse(body) as { messages?: Array<{ role?: string; content?: unknown }> }).messages ?? [];
    const system = messages.find((m) => m.role === 'system')?.content;
    return typeof system === 'string' ? system : '';
  } catch {
    return '';
  }
}

/** A key no pattern would catch: only knowing its value removes it. */
export function patternlessKey(): string {
  return `candor-test-key-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
}
