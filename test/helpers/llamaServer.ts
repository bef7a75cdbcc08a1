// A real llama.cpp `llama-server` for the tests of the provider path: found in
// one place, started on a free loopback port, stopped by its pid.
//
// Where it comes from (README, "Testing against a real llama-server"):
// - CANDOR_LLAMA_SERVER: a `llama-server` binary;
// - CANDOR_LLAMA_MODEL: a GGUF that every test uses (else the two tiny
//   models below, by role);
// - else ../shared/llama beside the checkout, when it is there: its
//   AVX2 build on a CPU with those flags, its generic build otherwise, and
//   its two tiny models with Qwen3's real tokenizer and chat template.
// When none is found the tests that need it skip with that reason; the CI
// run counts skipped tests and fails on any.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { skipUnless } from './preconditions';
import { isAlive } from '../../src/core/process/lockFile';

/** The tiny models' roles: `random` answers random text and never stops early; `toolcall` calls `list_files`, then thinks and answers "Done.". */
export type LlamaModel = 'random' | 'toolcall';

export interface LlamaFound {
  readonly server: string;
  readonly models: Readonly<Record<LlamaModel, string>>;
}

export interface LlamaOptions {
  /** Context size (`-c`); default 32768. */
  readonly ctx?: number;
  readonly model?: LlamaModel;
  /** More flags for llama-server (e.g. `-np 2`, `-n 16`); `-n 64 -t 1` are the defaults unless given. */
  readonly flags?: readonly string[];
}

export interface LlamaServer {
  readonly pid: number;
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** `http://127.0.0.1:PORT/v1`, what `candor.baseUrl` takes. */
  readonly baseUrl: string;
  /** The model id the server reports: the GGUF's path. */
  readonly modelPath: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SHARED = path.resolve(REPO_ROOT, '..', 'shared', 'llama');
const AVX2_FLAGS = ['sse4_2', 'avx', 'avx2', 'fma', 'f16c', 'bmi2'];

/** The server and models, or why there are none. */
export function findLlama(env: NodeJS.ProcessEnv = process.env): LlamaFound | { readonly missing: string } {
  const dir = SHARED;
  const server = env.CANDOR_LLAMA_SERVER || sharedServer(dir);
  if (server === undefined) return { missing: `no llama-server: set CANDOR_LLAMA_SERVER, or put llama.cpp's test kit at ${dir}` };
  if (!isExecutable(server)) return { missing: `CANDOR_LLAMA_SERVER (${server}) is not an executable file` };
  const one = env.CANDOR_LLAMA_MODEL;
  const models = one
    ? { random: one, toolcall: one }
    : { random: path.join(dir, 'models', 'tiny-qwen3tok.gguf'), toolcall: path.join(dir, 'models', 'tiny-qwen3tok-toolcall.gguf') };
  for (const file of Object.values(models)) {
    if (!fs.existsSync(file)) return { missing: `no model at ${file}: set CANDOR_LLAMA_MODEL to a GGUF` };
  }
  return { server, models };
}

/** In a mocha hook or test: the server, or a skip naming why there is none. */
export function llamaOrSkip(ctx: Mocha.Context): LlamaFound {
  const found = findLlama();
  skipUnless(ctx, 'missing' in found ? found.missing : undefined);
  return found as LlamaFound;
}

/** Starts llama-server on a free loopback port and waits for /health; stop it with `stop()`. */
export async function startLlama(found: LlamaFound, options: LlamaOptions = {}): Promise<LlamaServer> {
  const port = await freePort();
  const modelPath = found.models[options.model ?? 'random'];
  const flags = [...(options.flags ?? [])];
  if (!flags.some((f) => f === '-n' || f === '--n-predict' || f === '--predict')) flags.push('-n', '64');
  if (!flags.some((f) => f === '-t' || f === '--threads')) flags.push('-t', '1');
  const args = ['-m', modelPath, '--host', '127.0.0.1', '--port', String(port), '--jinja', '-c', String(options.ctx ?? 32768), ...flags];
  const logFile = path.join(os.tmpdir(), `candor-llama-${port}.log`);
  const log = fs.openSync(logFile, 'w');
  const child = spawn(found.server, args, { detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error(`llama-server did not start: ${found.server}`);
  const origin = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // already gone
    }
    for (let i = 0; i < 100 && isAlive(pid); i += 1) await delay(20);
  };
  try {
    await waitHealthy(origin, pid, logFile);
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid, port, origin, baseUrl: `${origin}/v1`, modelPath, logFile, stop };
}

async function waitHealthy(origin: string, pid: number, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) throw new Error(`llama-server exited; the end of ${logFile}:\n${tail(logFile)}`);
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(1000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await delay(100);
  }
  throw new Error(`llama-server gave no 200 on /health within 60 s; the end of ${logFile}:\n${tail(logFile)}`);
}

function sharedServer(dir: string): string | undefined {
  const generic = path.join(dir, 'bin', 'llama-server');
  const avx2 = path.join(dir, 'bin', 'llama-server-avx2');
  if (isExecutable(avx2) && cpuHasAvx2()) return avx2;
  return isExecutable(generic) ? generic : undefined;
}

function cpuHasAvx2(): boolean {
  try {
    const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('flags'));
    const flags = new Set((line ?? '').split(':')[1]?.trim().split(/\s+/) ?? []);
    return AVX2_FLAGS.every((flag) => flags.has(flag));
  } catch {
    return false;
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
