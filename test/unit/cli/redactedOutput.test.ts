import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { redactWrites } from '../../../src/cli/main';
import { REDACTED, SecretSet } from '../../../src/core/redact';
import { patternlessKey, startEchoServer } from '../core/provider/echoServer';

const KEY = 'cli-secret-key-0a1b2c3d4e';

/** A real write stream on a file, as stdout is when redirected. */
async function writeThrough(chunks: ReadonlyArray<string | Buffer>, wrap: boolean): Promise<string> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-cli-out-')), 'out.txt');
  const stream = fs.createWriteStream(file) as unknown as NodeJS.WriteStream;
  const flush = wrap ? redactWrites(stream, new SecretSet([KEY]), 64) : () => undefined;
  for (const chunk of chunks) stream.write(chunk);
  flush();
  await new Promise<void>((resolve) => stream.end(resolve));
  return fs.readFileSync(file, 'utf8');
}

describe('the CLI\'s stdout and stderr', () => {
  it('the trap: a key written in two pieces is whole in the output', async () => {
    assert.ok((await writeThrough([`key ${KEY.slice(0, 9)}`, `${KEY.slice(9)} done\n`], false)).includes(KEY));
  });

  it('redactWrites holds text until its line ends, so a key in two writes is redacted whole', async () => {
    const out = await writeThrough([`key ${KEY.slice(0, 9)}`, `${KEY.slice(9)} done\n`, 'last line without newline'], true);
    assert.equal(out, `key ${REDACTED} done\nlast line without newline`);
  });

  it('bytes split inside a character, a Buffer chunk, and a line longer than the limit', async () => {
    const e = Buffer.from('é\n');
    const out = await writeThrough([e.subarray(0, 1), e.subarray(1), Buffer.from(`${KEY}\n`), 'x'.repeat(100)], true);
    assert.equal(out, `é\n${REDACTED}\n${'x'.repeat(100)}`);
  });

  it('the bundled CLI prints no key a provider echoed (prompt-evolve through main)', async function () {
    this.timeout(90_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-cli-key-'));
    const cli = path.join(dir, 'cli.js');
    await esbuild.build({ entryPoints: [path.resolve(__dirname, '../../../src/cli/main.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: cli, logLevel: 'error' });
    // Installed, the CLI finds sql.js's wasm beside it.
    fs.copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), path.join(dir, 'sql-wasm.wasm'));
    const workspace = path.join(dir, 'ws');
    fs.mkdirSync(path.join(workspace, '.candor', 'evals'), { recursive: true });
    fs.writeFileSync(path.join(workspace, '.candor', 'evals', 'tasks.jsonl'), JSON.stringify({ id: 't1', input: 'a', expected: 'a', scorer: 'exact' }));
    const server = await startEchoServer(401);
    const key = patternlessKey();
    try {
      const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [cli, 'prompt-evolve', '--workspace', workspace, '--data-dir', path.join(dir, 'data'), '--base-url', server.baseUrl, '--model', 'm'], {
          env: { ...process.env, OPENAI_API_KEY: key },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (c: Buffer) => (output += c.toString()));
        child.stderr.on('data', (c: Buffer) => (output += c.toString()));
        child.on('close', (code) => resolve({ code, output }));
      });
      assert.equal(server.seen[0], `Bearer ${key}`, `the key was sent, and echoed: ${result.output}`);
      assert.equal(result.code, 1, result.output);
      assert.ok(result.output.includes(REDACTED), result.output);
      assert.ok(!result.output.includes(key), result.output);
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
