// The real servers the client tests connect to: the reference servers
// installed in node_modules, the fixtures of test/fixtures/mcp, and the
// HTTP transport of server-everything on a free port.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { ExpandedServer } from '../../../../src/core/mcp/types';

const ROOT = path.resolve(__dirname, '../../../..');
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const FIXTURES = path.join(ROOT, 'test/fixtures/mcp');

/** The environment every test server gets: PATH and nothing else unless asked. */
export function minimalEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra };
}

export function everythingStdio(env: Record<string, string> = minimalEnv()): ExpandedServer {
  return { name: 'everything', type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env };
}

export function fixture(name: string, env: Record<string, string> = minimalEnv()): ExpandedServer {
  return { name, type: 'stdio', command: process.execPath, args: [path.join(FIXTURES, `${name}.mjs`)], env };
}

export function inlineServer(name: string, script: string, env: Record<string, string> = minimalEnv()): ExpandedServer {
  return { name, type: 'stdio', command: process.execPath, args: ['-e', script], env };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** server-everything over HTTP (`streamableHttp` or `sse`), started and listening. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse'): Promise<{ port: number; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: minimalEnv({ PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start: ${said}`)), 20_000);
    const listen = (chunk: Buffer): void => {
      said += chunk.toString();
      if (/listening on port|running on port/i.test(said)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', listen);
    child.stderr?.on('data', listen);
    child.once('exit', (code) => reject(new Error(`server-everything ${mode} exited with ${code}: ${said}`)));
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  };
  return { port, child, stop };
}

/** Whether `pid` is a live process (a zombie, dead but not yet reaped, is not). */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may hold spaces.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A signal that never aborts, for calls that test something else. */
export const NEVER = new AbortController().signal;
