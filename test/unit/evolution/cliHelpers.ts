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
