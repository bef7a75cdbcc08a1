import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { REPO_ROOT, sourcesUnder, stripComments } from '../../../helpers/sources';

/**
 * The model port's promise is structural: the `openai` SDK is reached only
 * through `src/core/provider`. These tests read the sources themselves.
 */
const ADAPTER = 'src/core/provider/openaiModel.ts';
/** This file: its examples of imports are strings. */
const SELF = path.relative(REPO_ROOT, __filename).split(path.sep).join('/');
/** The folders scanned, each with a file the scan must see there. */
const SCANNED: Readonly<Record<string, string>> = { src: ADAPTER, webview: 'webview/main.ts', bench: 'bench/run.ts', test: SELF };
/** Where the SDK may be imported: the adapter, and the tests whose trap shows what the raw SDK does without it. */
const ALLOWED = [
  /^src\/core\/provider\//,
  /^test\/unit\/core\/provider\/keyEcho\.test\.ts$/,
  /^test\/unit\/core\/chat\/keyEcho\.test\.ts$/,
  /^test\/unit\/core\/promptEvolution\/keyEcho\.test\.ts$/,
];

/** `import … from 'openai'`, `import 'openai/…'`, `export … from`, `require(…)` and `import(…)`, types included. */
const OPENAI_IMPORT = /(?:\bfrom\s*|\bimport\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)['"]openai(?:\/[^'"]*)?['"]/;

function importersOfOpenAi(): string[] {
  return Object.entries(SCANNED)
    .flatMap(([dir, expected]) => sourcesUnder(dir, [expected]))
    .filter(({ file, code }) => file !== SELF && OPENAI_IMPORT.test(stripComments(code)))
    .map(({ file }) => file);
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
    assert.ok(found.includes(ADAPTER), found.join('\n'));
  });

  it('nothing outside src/core/provider imports it, but the tests that show the raw SDK leaking a key', () => {
    const importers = importersOfOpenAi();
    assert.ok(importers.includes(ADAPTER), 'the scan finds the adapter, so it reads real files');
    const offenders = importers.filter((file) => !ALLOWED.some((allowed) => allowed.test(file)));
    assert.deepEqual(offenders, []);
  });
});
