import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The model port's promise is structural: the `openai` SDK is reached only
 * through `src/core/provider`. These tests read the sources themselves.
 */
const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['src', 'webview', 'bench', 'test'];
/** Where the SDK may be imported: the adapter, and the tests whose trap shows what the raw SDK does without it. */
const ALLOWED = [
  /^src\/core\/provider\//,
  /^test\/unit\/provider\/keyEcho\.test\.ts$/,
  /^test\/unit\/chat\/keyEcho\.test\.ts$/,
  /^test\/unit\/promptEvolution\/keyEcho\.test\.ts$/,
];

/** `import … from 'openai'`, `import 'openai/…'`, `export … from`, `require(…)` and `import(…)`, types included. */
const OPENAI_IMPORT = /(?:\bfrom\s*|\bimport\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)['"]openai(?:\/[^'"]*)?['"]/;

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

/** Comments may name the SDK to explain why it is absent. */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** This file: its examples of imports are strings. */
const SELF = path.relative(ROOT, __filename).split(path.sep).join('/');

function importersOfOpenAi(): string[] {
  return SCANNED.flatMap((dir) => sourceFiles(path.join(ROOT, dir)))
    .filter((file) => file !== SELF)
    .filter((file) => OPENAI_IMPORT.test(stripComments(fs.readFileSync(path.join(ROOT, file), 'utf8'))));
}

describe('the openai SDK sits behind the model port', () => {
  it('the scan recognises every form of import (the trap: each of these lines would be found)', () => {
    for (const line of [
      "import OpenAI from 'openai';",
      "import type OpenAI from 'openai';",
      'import type { ChatCompletion } from "openai/resources";',
      "export { APIError } from 'openai';",
      "const sdk = require('openai');",
      "const sdk = await import('openai');",
    ]) assert.ok(OPENAI_IMPORT.test(line), line);
    for (const line of ["import { openaiLike } from './openaiModel';", "// import OpenAI from 'openai'", "const name = 'openai';"]) {
      assert.ok(!OPENAI_IMPORT.test(stripComments(line)), line);
    }
  });

  it('the adapter imports it: the scan sees real files', () => {
    const found = importersOfOpenAi();
    assert.ok(found.includes('src/core/provider/openaiModel.ts'), found.join('\n'));
  });

  it('nothing outside src/core/provider imports it, but the tests that show the raw SDK leaking a key', () => {
    const offenders = importersOfOpenAi().filter((file) => !ALLOWED.some((allowed) => allowed.test(file)));
    assert.deepEqual(offenders, []);
  });
});
