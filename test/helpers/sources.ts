// Source scans: tests that read the project's own files and assert that a
// pattern is absent or present. A scan that reads nothing passes every
// absence check, so the reading itself asserts what it saw.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface SourceFile {
  /** Relative to the repository root, with `/`. */
  readonly file: string;
  readonly code: string;
}

const SCRIPT_FILE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;

/**
 * Every script file under `dir` (relative to the repository root), recursively,
 * node_modules left out. Fails unless the folder exists, every file has
 * content, and each of `expected` (paths relative to the root) is among them:
 * the files the scan means to see.
 */
export function sourcesUnder(dir: string, expected: readonly string[], pattern: RegExp = SCRIPT_FILE): SourceFile[] {
  const root = path.join(REPO_ROOT, dir);
  assert.ok(fs.statSync(root, { throwIfNoEntry: false })?.isDirectory(), `${dir} is a folder`);
  const files = fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && pattern.test(entry.name) && !entry.parentPath.split(path.sep).includes('node_modules'))
    .map((entry) => {
      const absolute = path.join(entry.parentPath, entry.name);
      return { file: path.relative(REPO_ROOT, absolute).split(path.sep).join('/'), code: fs.readFileSync(absolute, 'utf8') };
    });
  const empty = files.filter((source) => source.code.trim() === '').map((source) => source.file);
  assert.deepEqual(empty, [], `empty files under ${dir}`);
  const seen = new Set(files.map((source) => source.file));
  for (const file of expected) assert.ok(seen.has(file), `the scan of ${dir} sees ${file} (${files.length} files)`);
  return files;
}

/** Comments may name what a scan looks for, to explain why it is absent. */
export function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/**
 * Every `candor.*` id the host registers, and the file that does: the first
 * argument of `registerCommand(…)` or of a wrapper around it (`run`,
 * `command`, `register`), found by reading the sources under `src`.
 */
export function commandRegistrations(): Array<{ id: string; file: string }> {
  const found: Array<{ id: string; file: string }> = [];
  for (const { file, code } of sourcesUnder('src', ['src/extension.ts'], /\.ts$/)) {
    for (const match of code.matchAll(/\b(?:registerCommand|command|run|register)\(\s*['"](candor\.[A-Za-z]+)['"]/g)) found.push({ id: match[1] ?? '', file });
  }
  return found;
}
