import * as assert from 'node:assert/strict';
import { ALLOWED_SUBCOMMANDS } from '../../../../src/core/git/allowList';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { WRITING_VERBS } from '../../../helpers/gitSpy';
import { sourcesUnder, stripComments } from '../../../helpers/sources';

/**
 * The guard's promise is structural: its source cannot express a destructive
 * command. These tests read the source itself; each first shows that its
 * pattern finds what it looks for, so none passes by reading nothing.
 */
const GUARD = 'src/core/git/guard.ts';
const SHAPED_WRITES_FILE = 'src/core/git/shapedWrites.ts';
/** The writing verbs the guard never runs, in any shape (fetch, push and config it runs in one shape each). */
const FORBIDDEN = WRITING_VERBS.filter((verb) => !(ALLOWED_SUBCOMMANDS as readonly string[]).includes(verb));

/** Literals that start with a writing verb's word and run nothing: each says why, and each must still be found. */
const NOT_COMMANDS: ReadonlyArray<{ readonly file: string; readonly literal: RegExp; readonly why: string }> = [
  { file: 'src/core/git/gitDirs.ts', literal: /^worktree$/, why: 'the key core.worktree, read from the config file' },
  { file: SHAPED_WRITES_FILE, literal: /^branch name \$\{/, why: 'the message that refuses a branch name' },
];

function sources(): Array<{ file: string; code: string }> {
  return sourcesUnder('src/core/git', [GUARD, SHAPED_WRITES_FILE, 'src/core/git/allowList.ts', 'src/core/git/hostileConfig.ts'])
    .map(({ file, code }) => ({ file, code: stripComments(code) }));
}

function stringLiterals(code: string): string[] {
  const found: string[] = [];
  const literal = /'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g;
  for (let match = literal.exec(code); match !== null; match = literal.exec(code)) found.push(match[1] ?? match[2] ?? match[3] ?? '');
  return found;
}

describe('git guard source', () => {
  it('contains no forbidden word as a command in any string literal', () => {
    const all = sources();
    const literalsOf = (file: string): string[] => stringLiterals(all.find((s) => s.file === file)?.code ?? '');
    assert.ok(literalsOf(GUARD).includes('status'), "the literal scan finds 'status' in guard.ts");
    for (const seen of ['fetch', 'push']) assert.ok(literalsOf(SHAPED_WRITES_FILE).includes(seen), `the literal scan finds '${seen}' in shapedWrites.ts`);
    assert.ok(FORBIDDEN.length >= 100 && FORBIDDEN.includes('stash'), `${FORBIDDEN.length} forbidden verbs`);
    const offences: string[] = [];
    const excused = new Set<string>();
    for (const { file, code } of all) {
      for (const text of stringLiterals(code)) {
        const firstWord = text.trim().split(/\s+/)[0] ?? '';
        if (!FORBIDDEN.includes(firstWord)) continue;
        const why = NOT_COMMANDS.find((known) => known.file === file && known.literal.test(text))?.why;
        if (why === undefined) offences.push(`${file}: '${text}'`);
        else excused.add(why);
      }
    }
    assert.deepEqual(offences, []);
    assert.deepEqual([...excused].sort(), NOT_COMMANDS.map((known) => known.why).sort(), 'every excused literal is still there');
  });

  it('names only allowed subcommands where it invokes git', () => {
    const invoked = new Set<string>();
    for (const { code } of sources()) {
      for (const match of code.matchAll(/subcommand:\s*'([^']+)'/g)) invoked.add(match[1] ?? '');
    }
    assert.ok(invoked.size >= 8 && invoked.has('push') && invoked.has('fetch'), `found ${[...invoked].join(', ')}`);
    for (const name of invoked) {
      assert.ok((ALLOWED_SUBCOMMANDS as readonly string[]).includes(name), `${name} is not on the allow-list`);
      assert.ok(!FORBIDDEN.includes(name), name);
      if (WRITING_VERBS.includes(name)) assert.ok(['fetch', 'push', 'config'].includes(name), `${name} writes`);
    }
  });

  it('starts git in exactly one place, through simple-git raw (or showBuffer, for a blob\'s bytes) after the allow-list check', () => {
    const all = sources();
    const raw = all.flatMap(({ file, code }) => [...code.matchAll(/\.raw\(/g)].map(() => file));
    assert.deepEqual(raw, [GUARD]);
    const guard = all.find((s) => s.file === GUARD)?.code ?? '';
    assert.ok(guard.includes('async function runGit'), 'guard.ts has runGit');
    const runGit = guard.slice(guard.indexOf('async function runGit'));
    const [check, call] = [runGit.indexOf('checkInvocation(invocation)'), runGit.indexOf('.raw(')];
    assert.ok(check >= 0 && call >= 0, 'runGit checks the invocation and calls raw');
    assert.ok(check < call, 'the check comes before the call');
    const bytes = runGit.indexOf('.showBuffer(');
    assert.ok(bytes > check, 'the bytes of a blob are read after the check too');
    assert.ok(guard.includes("from 'simple-git'"), 'the scan sees the guard import simple-git');
    for (const { file, code } of all) {
      assert.ok(!/child_process|execFile|execSync|\bspawn\w*\(/.test(code), `${file} starts processes another way`);
      if (file !== GUARD) assert.ok(!code.includes('simple-git'), `${file} imports simple-git`);
    }
    // The simple-git instance (`git`, `this.#git`, `probe`) is only ever asked for `raw` and
    // `showBuffer` (`git show`, a read): none of its helpers (stash, reset, clean, checkout, …) is called.
    const called = new Set([...guard.matchAll(/(?:\bgit|#git|\bprobe)\s*\.\s*(\w+)\s*\(/g)].map((m) => m[1]));
    assert.deepEqual([...called].sort(), ['raw', 'showBuffer']);
  });

  it('offers reads, the hand-off and the push, and no raw, exec or instance accessor', () => {
    const methods = Object.getOwnPropertyNames(ReadOnlyGit.prototype).filter((name) => name !== 'constructor').sort();
    assert.deepEqual(methods, [
      'blob',
      'diffStaged',
      'diffUnstaged',
      'dirtyState',
      'headCommit',
      'history',
      'ignoredAmong',
      'inProgress',
      'listFiles',
      'log',
      'overview',
      'pushBranch',
      'pushRedirects',
      'remoteUrl',
      'revParse',
      'show',
      'status',
      'takeBranch',
      'topCommitTrailers',
    ]);
    assert.deepEqual(Object.getOwnPropertyNames(ReadOnlyGit).filter((n) => !['length', 'name', 'prototype'].includes(n)), ['open']);
  });

  it('never imports vscode', () => {
    const vscodeImport = /from\s+['"]vscode['"]|require\(['"]vscode['"]\)/;
    for (const line of ["import * as vscode from 'vscode';", 'const vscode = require("vscode");']) assert.ok(vscodeImport.test(line), `the pattern finds ${line}`);
    for (const { file, code } of sources()) assert.ok(!vscodeImport.test(code), file);
  });
});
