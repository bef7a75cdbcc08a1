import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DirtyReason } from '../../../../src/core/git/dirty';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import type { UnsavedBufferSource } from '../../../../src/core/git/unsaved';
import { runEveryRead } from './helpers/everyRead';
import { divergeOn, git, gitStatusCode, prng, removeTempDirs, snapshot, tempDir, write } from './helpers/repo';

/**
 * Property-style: many generated repository states, each a random mix of
 * changes on top of a random mode (clean, mid-merge, mid-rebase, detached).
 * For every state the guard's dirty reasons must be exactly the expected
 * ones, and running every read and every tool must leave the repository
 * byte-for-byte as it was.
 */

type Mode = 'plain' | 'merge' | 'rebase' | 'detached';

interface Feature {
  readonly name: string;
  apply(repo: string): void;
  readonly expect: readonly string[];
}

const reason = (kind: string, file: string, where = 'disk', from?: string): string => [kind, file, where, from ?? ''].join('|');

const FEATURES: readonly Feature[] = [
  { name: 'staged', apply: (r) => { write(r, 'src/a.txt', 'a changed\n'); git(r, 'add', 'src/a.txt'); }, expect: [reason('staged', 'src/a.txt')] },
  { name: 'unstaged', apply: (r) => write(r, 'src/b.txt', 'b changed\n'), expect: [reason('unstaged', 'src/b.txt')] },
  { name: 'untracked', apply: (r) => write(r, 'new dir/nouveau ü.txt', 'new\n'), expect: [reason('untracked', 'new dir/nouveau ü.txt')] },
  { name: 'ignored', apply: (r) => { write(r, 'debug.log', 'log\n'); write(r, 'ignored-dir/x.txt', 'x\n'); }, expect: [] },
  { name: 'renamed', apply: (r) => git(r, 'mv', 'README.md', 'READ ME.md'), expect: [reason('staged', 'READ ME.md', 'disk', 'README.md')] },
  { name: 'deleted-unstaged', apply: (r) => fs.rmSync(path.join(r, 'dir with space', 'c d.txt')), expect: [reason('unstaged', 'dir with space/c d.txt')] },
  { name: 'deleted-staged', apply: (r) => git(r, 'rm', '-q', 'ünïcödé/файл.txt'), expect: [reason('staged', 'ünïcödé/файл.txt')] },
  { name: 'binary', apply: (r) => write(r, 'bin/data.bin', Buffer.from([0, 1, 2, 0xff, 0, 9])), expect: [reason('unstaged', 'bin/data.bin')] },
  { name: 'submodule', apply: (r) => write(r, 'sub/s.txt', 'changed in the submodule\n'), expect: [reason('unstaged', 'sub')] },
];

const MODE_EXPECT: Readonly<Record<Mode, readonly string[]>> = {
  plain: [],
  detached: [],
  merge: [reason('merge-in-progress', '.git/MERGE_HEAD'), reason('conflict', 'conflict.txt')],
  rebase: [reason('rebase-in-progress', '.git/rebase-merge'), reason('conflict', 'conflict.txt')],
};

function enterMode(repo: string, mode: Mode): void {
  if (mode === 'merge') assert.notEqual(gitStatusCode(repo, 'merge', 'other'), 0, 'the merge stops on a conflict');
  if (mode === 'rebase') assert.notEqual(gitStatusCode(repo, 'rebase', 'other'), 0, 'the rebase stops on a conflict');
  if (mode === 'detached') git(repo, 'checkout', '-q', '--detach', 'HEAD');
}

/** Base: every kind of path, a submodule, and two branches that conflict on conflict.txt. */
function buildBase(): string {
  const sub = tempDir('candor-sub-');
  git(sub, 'init', '-q', '-b', 'main');
  write(sub, 's.txt', 'submodule file\n');
  git(sub, 'add', '-A');
  git(sub, 'commit', '-q', '-m', 'sub');

  const repo = tempDir('candor-base-');
  git(repo, 'init', '-q', '-b', 'main');
  write(repo, 'README.md', '# Readme\n\nA readme with enough words to be recognised as renamed.\n');
  write(repo, 'src/a.txt', 'a\n');
  write(repo, 'src/b.txt', 'b\n');
  write(repo, 'dir with space/c d.txt', 'spaces\n');
  write(repo, 'ünïcödé/файл.txt', 'unicode path, distinct content\n');
  write(repo, 'bin/data.bin', Buffer.from([0, 159, 146, 150, 0, 1]));
  write(repo, '.gitignore', '*.log\nignored-dir/\n');
  write(repo, 'conflict.txt', 'base\n');
  git(repo, 'add', '-A');
  git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
  git(repo, 'commit', '-q', '-m', 'base');
  divergeOn(repo, 'conflict.txt', 'main side\n\nCandor-Rant: 01hbase');
  return repo;
}

interface State {
  readonly label: string;
  readonly mode: Mode;
  readonly features: readonly Feature[];
  readonly unsaved: boolean;
}

function generatedStates(): State[] {
  const modes: Mode[] = ['plain', 'merge', 'rebase', 'detached'];
  const states: State[] = modes.map((mode) => ({ label: `${mode} + every change + unsaved`, mode, features: FEATURES, unsaved: true }));
  states.push({ label: 'plain, clean', mode: 'plain', features: [], unsaved: false });
  for (let seed = 1; seed <= 8; seed++) {
    const random = prng(seed);
    const mode = modes[Math.floor(random() * modes.length)] ?? 'plain';
    const features = FEATURES.filter(() => random() < 0.5);
    const unsaved = random() < 0.5;
    states.push({ label: `seed ${seed}: ${mode} + ${features.map((f) => f.name).join(', ') || 'nothing'}${unsaved ? ' + unsaved' : ''}`, mode, features, unsaved });
  }
  return states;
}

function toKey(r: DirtyReason): string {
  return reason(r.kind, r.file, r.where, r.from);
}

describe('read-only git guard: generated states', function () {
  this.timeout(120_000);
  let base = '';
  before(() => {
    base = buildBase();
  });
  after(removeTempDirs);

  for (const state of generatedStates()) {
    it(`${state.label}: dirty reasons are exact and every read leaves the repo identical`, async () => {
      const repo = tempDir('candor-state-');
      fs.cpSync(base, repo, { recursive: true, preserveTimestamps: true });
      enterMode(repo, state.mode);
      for (const feature of state.features) feature.apply(repo);

      const ignoredOn = state.features.some((f) => f.name === 'ignored');
      const buffers = state.unsaved
        ? [path.join(repo, 'src', 'b.txt'), path.join(repo, 'debug.log'), path.join(repo, '.git', 'COMMIT_EDITMSG'), path.join(path.dirname(repo), 'elsewhere.txt')]
        : [];
      const unsaved: UnsavedBufferSource = { unsavedFiles: () => buffers };
      const expected = new Set([...MODE_EXPECT[state.mode], ...state.features.flatMap((f) => f.expect)]);
      if (state.unsaved) {
        expected.add(reason('unsaved', 'src/b.txt', 'unsaved'));
        // An unsaved buffer of an ignored file counts only if the file is not (yet) on disk as ignored.
        if (!ignoredOn) expected.add(reason('unsaved', 'debug.log', 'unsaved'));
      }

      const guard = await ReadOnlyGit.open(repo);
      const state0 = await guard.dirtyState(unsaved);
      assert.deepEqual(new Set(state0.reasons.map(toKey)), expected);
      assert.equal(state0.dirty, expected.size > 0);
      const status = await guard.status();
      assert.equal(status.branch.detached, state.mode === 'detached' || state.mode === 'rebase');

      const before = snapshot(repo);
      await runEveryRead(guard, unsaved, ['src/a.txt', 'bin/data.bin']);
      const after = snapshot(repo);
      assert.deepEqual(after, before);
    });
  }
});
