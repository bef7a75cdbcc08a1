import { spawn } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { FIXTURE_ENV, git } from './repo';

/**
 * A git remote over HTTP on the loopback, as a hosting service serves one:
 * git's own `http-backend` behind a server that asks for a user name and
 * password (Basic) on every request. A push that gets through was signed in
 * by the client's credential helper; `seen` records who each request came as.
 */
export interface HttpRemote {
  /** `http://127.0.0.1:PORT/<name>.git` for a bare repository `<root>/<name>.git`. */
  url(name: string): string;
  /** The user of each request ('' when it came without credentials). */
  readonly seen: string[];
  close(): Promise<void>;
}

export async function startHttpRemote(root: string, credentials: { readonly user: string; readonly password: string }): Promise<HttpRemote> {
  const seen: string[] = [];
  const backend = path.join(git(root, '--exec-path').trim(), 'git-http-backend');
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const [user = '', password = ''] = basicCredentials(req.headers.authorization);
    seen.push(user);
    if (user !== credentials.user || password !== credentials.password) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test remote"' });
      res.end();
      return;
    }
    const cgi = spawn(backend, [], {
      env: {
        ...FIXTURE_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ''),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(cgi.stdin);
    relayCgi(cgi.stdout, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}.git`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function basicCredentials(header: string | undefined): string[] {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (match === null) return [];
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? [decoded] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** A CGI answer is headers (`Status:` among them), a blank line, then the body. */
function relayCgi(output: NodeJS.ReadableStream, res: http.ServerResponse): void {
  let head = Buffer.alloc(0);
  let started = false;
  output.on('data', (chunk: Buffer) => {
    if (started) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) return;
    started = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const [name, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else if (name !== '') headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  output.on('end', () => res.end());
}
