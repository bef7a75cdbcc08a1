import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The CLI bundled as scripts/build.mjs bundles it, into a private folder
 * (dist/ is left to the build) that the per-test temp cleanup does not touch;
 * `remove` deletes it.
 */
export async function buildCli(): Promise<{ readonly cli: string; remove(): void }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-cli-build-'));
  const cli = path.join(out, 'cli.js');
  await esbuild.build({ entryPoints: [path.resolve(__dirname, '../../../src/cli/main.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: cli, logLevel: 'error' });
  return { cli, remove: () => fs.rmSync(out, { recursive: true, force: true }) };
}

/** `node cli.js …` in a child process: its environment (and so its /proc/<pid>/environ) is `env` over ours. */
export function runCli(cli: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface SlowReadResult {
  readonly code: number | null;
  /** At most the first MiB of stderr. */
  readonly stderr: string;
  /** Bytes of stdout received in all. */
  readonly bytes: number;
  /** N of every `[… N bytes not shown …]` line, in order. */
  readonly notShown: readonly number[];
  /** How many times `line` arrived whole. */
  readonly lineCount: number;
  /** The last 64 KiB of stdout. */
  readonly tail: string;
}

const MARKER = new RegExp(Buffer.from('\\[… ([\\d,]+) bytes not shown …\\]\n').toString('latin1'), 'g');
const CARRY = 256;

/**
 * `node cli.js …` with stdout piped to a slow reader, as `| tee log` or a
 * pager is: 64 KiB every 10 ms for `slowMs`, then as fast as it comes, so
 * the test stays short. Nothing of stdout is kept but counts and its tail.
 */
export function runCliSlowReader(cli: string, args: string[], env: NodeJS.ProcessEnv, options: { readonly slowMs: number; readonly line: string }): Promise<SlowReadResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 1024 * 1024) stderr += c.toString();
    });
    let bytes = 0;
    let lineCount = 0;
    const notShown: number[] = [];
    let carry = '';
    let tail = '';
    // Bytes as latin1 text: one character per byte, so counts and offsets are in bytes.
    const line = Buffer.from(options.line).toString('latin1');
    const take = (chunk: Buffer): void => {
      bytes += chunk.length;
      const text = chunk.toString('latin1');
      const window = carry + text;
      // Only matches that end past the carried part are new.
      for (let at = window.indexOf(line, Math.max(0, carry.length - line.length + 1)); at !== -1; at = window.indexOf(line, at + line.length)) lineCount++;
      for (const m of window.matchAll(MARKER)) if ((m.index ?? 0) + m[0].length > carry.length) notShown.push(Number((m[1] ?? '').replace(/,/g, '')));
      carry = window.slice(-CARRY);
      tail = (tail + text).slice(-64 * 1024);
    };
    // A pipe read hands over at most 64 KiB; after each, the reader rests 10 ms. (A 'data' listener, not read():
    // when the child exits, Node resumes a stdout nobody listens to, and what it still holds would be lost.)
    let slow = true;
    let resting: NodeJS.Timeout | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      take(chunk);
      if (!slow) return;
      child.stdout.pause();
      resting = setTimeout(() => child.stdout.resume(), 10);
    });
    const fast = setTimeout(() => {
      slow = false;
      clearTimeout(resting);
      child.stdout.resume();
    }, options.slowMs);
    child.on('close', (code) => {
      clearTimeout(resting);
      clearTimeout(fast);
      resolve({ code, stderr, bytes, notShown, lineCount, tail: Buffer.from(tail, 'latin1').toString('utf8') });
    });
  });
}
