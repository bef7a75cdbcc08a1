import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALLOWED_SUBCOMMANDS } from '../../../src/core/git/allowList';
import { ReadOnlyGit } from '../../../src/core/git/guard';

/**
 * The guard's promise is structural: its source cannot express a destructive
 * command. These tests read the source itself.
 */
const GIT_SRC = path.resolve(__dirname, '../../../src/core/git');
const FORBIDDEN = ['stash', 'reset', 'clean', 'checkout', 'switch', 'restore', 'rebase', 'merge', 'commit', 'push', 'pull', 'gc', 'update-index', 'add', 'rm', 'mv'];

function sources(): Array<{ file: string; code: string }> {
  return fs
    .readdirSync(GIT_SRC)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ file: name, code: stripComments(fs.readFileSync(path.join(GIT_SRC, name), 'utf8')) }));
}

/** Comments may name forbidden commands to explain why they are absent. */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function stringLiterals(code: string): string[] {
  const found: string[] = [];
  const literal = /'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g;
  for (let match = literal.exec(code); match !== null; match = literal.exec(code)) found.push(match[1] ?? match[2] ?? match[3] ?? '');
  return found;
}

describe('git guard source', () => {
  it('contains no forbidden word as a command in any string literal', () => {
    const offences: string[] = [];
    for (const { file, code } of sources()) {
      for (const text of stringLiterals(code)) {
        const firstWord = text.trim().split(/\s+/)[0] ?? '';
        if (FORBIDDEN.includes(firstWord)) offences.push(`${file}: '${text}'`);
      }
    }
    assert.deepEqual(offences, []);
  });

  it('names only allowed subcommands where it invokes git', () => {
    const invoked = new Set<string>();
    for (const { code } of sources()) {
      for (const match of code.matchAll(/subcommand:\s*'([^']+)'/g)) invoked.add(match[1] ?? '');
    }
    assert.ok(invoked.size >= 8, `found ${[...invoked].join(', ')}`);
    for (const name of invoked) {
      assert.ok((ALLOWED_SUBCOMMANDS as readonly string[]).includes(name), `${name} is not on the allow-list`);
      assert.ok(!FORBIDDEN.includes(name), name);
    }
  });

  it('starts git in exactly one place, through simple-git raw after the allow-list check', () => {
    const all = sources();
    const raw = all.flatMap(({ file, code }) => [...code.matchAll(/\.raw\(/g)].map(() => file));
    assert.deepEqual(raw, ['guard.ts']);
    const guard = all.find((s) => s.file === 'guard.ts')?.code ?? '';
    const runGit = guard.slice(guard.indexOf('async function runGit'));
    assert.ok(runGit.indexOf('checkInvocation(invocation)') < runGit.indexOf('.raw('), 'the check comes before the call');
    for (const { file, code } of all) {
      assert.ok(!/child_process|execFile|execSync|\bspawn\w*\(/.test(code), `${file} starts processes another way`);
      if (file !== 'guard.ts') assert.ok(!code.includes('simple-git'), `${file} imports simple-git`);
    }
    // The simple-git instance (`git`, `this.#git`, `probe`) is only ever asked for `raw`:
    // none of its helpers (stash, reset, clean, checkout, …) is called.
    const called = new Set([...guard.matchAll(/(?:\bgit|#git|\bprobe)\s*\.\s*(\w+)\s*\(/g)].map((m) => m[1]));
    assert.deepEqual([...called], ['raw']);
  });

  it('offers reads and the one hand-off, and no raw, exec or instance accessor', () => {
    const methods = Object.getOwnPropertyNames(ReadOnlyGit.prototype).filter((name) => name !== 'constructor').sort();
    assert.deepEqual(methods, [
      'diffStaged',
      'diffUnstaged',
      'dirtyState',
      'headCommit',
      'ignoredAmong',
      'inProgress',
      'log',
      'overview',
      'revParse',
      'show',
      'status',
      'takeBranch',
      'topCommitTrailers',
    ]);
    assert.deepEqual(Object.getOwnPropertyNames(ReadOnlyGit).filter((n) => !['length', 'name', 'prototype'].includes(n)), ['open']);
  });

  it('never imports vscode', () => {
    for (const { file, code } of sources()) assert.ok(!/from\s+['"]vscode['"]|require\(['"]vscode['"]\)/.test(code), file);
  });
});
