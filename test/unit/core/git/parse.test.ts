import * as assert from 'node:assert/strict';
import { computeDirtyState, readOnlyReason } from '../../../../src/core/git/dirty';
import { parseLog, parseTrailers } from '../../../../src/core/git/parse';
import { parsePorcelainV2 } from '../../../../src/core/git/status';
import { candorRantIds } from '../../../helpers/core';

const OID = 'a'.repeat(40);
const OID2 = 'b'.repeat(40);

function z(...records: string[]): string {
  return records.map((r) => `${r}\0`).join('');
}

describe('porcelain v2 parser', () => {
  it('reads branch headers, ordinary, renamed, unmerged and untracked entries', () => {
    const out = z(
      `# branch.oid ${OID}`,
      '# branch.head main',
      '# branch.upstream origin/main',
      '# branch.ab +2 -3',
      `1 M. N... 100644 100644 100644 ${OID} ${OID2} staged file.txt`,
      `1 .D N... 100644 100644 000000 ${OID} ${OID} gone.txt`,
      `1 MM N... 100644 100644 100644 ${OID} ${OID2} both.txt`,
      `2 R. N... 100644 100644 100644 ${OID} ${OID} R100 new name ü.txt`,
      'old name.txt',
      `u UU N... 100644 100644 100644 100644 ${OID} ${OID2} ${OID} conflict.txt`,
      `1 .M S.MU 160000 160000 160000 ${OID} ${OID} sub`,
      '? untracked dir/with space.txt',
    );
    const status = parsePorcelainV2(out);
    assert.deepEqual(status.branch, { oid: OID, head: 'main', detached: false, upstream: 'origin/main', ahead: 2, behind: 3 });
    assert.deepEqual(status.staged, [
      { path: 'staged file.txt', change: 'modified' },
      { path: 'both.txt', change: 'modified' },
      { path: 'new name ü.txt', change: 'renamed', from: 'old name.txt' },
    ]);
    assert.deepEqual(status.unstaged, [
      { path: 'gone.txt', change: 'deleted' },
      { path: 'both.txt', change: 'modified' },
      { path: 'sub', change: 'modified', submodule: { commitChanged: false, trackedChanges: true, untrackedChanges: true } },
    ]);
    assert.deepEqual(status.renamed, [{ from: 'old name.txt', to: 'new name ü.txt', where: 'staged', score: 100 }]);
    assert.deepEqual(status.conflicted, [{ path: 'conflict.txt', code: 'UU' }]);
    assert.deepEqual(status.untracked, ['untracked dir/with space.txt']);
  });

  it('reads an unborn branch and a detached HEAD', () => {
    assert.deepEqual(parsePorcelainV2(z('# branch.oid (initial)', '# branch.head main')).branch, { oid: null, head: 'main', detached: false });
    assert.deepEqual(parsePorcelainV2(z(`# branch.oid ${OID}`, '# branch.head (detached)')).branch, { oid: OID, head: null, detached: true });
  });

  it('skips record types it does not know', () => {
    const status = parsePorcelainV2(z(`# branch.oid ${OID}`, '# branch.head main', '# stash 3', '! ignored.log', 'x future record'));
    assert.equal(status.untracked.length + status.staged.length + status.unstaged.length, 0);
  });
});

describe('dirty state', () => {
  const clean = parsePorcelainV2(z(`# branch.oid ${OID}`, '# branch.head main'));

  it('is clean with nothing changed, nothing in progress and no unsaved buffer', () => {
    assert.deepEqual(computeDirtyState(clean, [], []), { dirty: false, reasons: [] });
    assert.equal(readOnlyReason({ dirty: false, reasons: [] }), undefined);
  });

  it('a bisect alone is not dirty; a merge is', () => {
    assert.equal(computeDirtyState(clean, [{ operation: 'bisecting', marker: '.git/BISECT_LOG' }], []).dirty, false);
    assert.deepEqual(computeDirtyState(clean, [{ operation: 'merging', marker: '.git/MERGE_HEAD' }], []).reasons, [
      { file: '.git/MERGE_HEAD', kind: 'merge-in-progress', where: 'disk' },
    ]);
  });

  it('the log line names kinds and files, bounded', () => {
    const many = Array.from({ length: 3000 }, (_, i) => `? f${i}.txt`);
    const state = computeDirtyState(parsePorcelainV2(z(`# branch.oid ${OID}`, '# branch.head main', ...many)), [{ operation: 'rebasing', marker: '.git/rebase-merge' }], ['notes.md']);
    const line = readOnlyReason(state) ?? '';
    assert.ok(line.startsWith('dirty working tree — read-only cycle: '), line);
    assert.match(line, /rebase in progress/);
    assert.match(line, /3,000 untracked \(f0\.txt, f1\.txt, f2\.txt, f3\.txt, f4\.txt, … 2,995 more\)/);
    assert.match(line, /1 unsaved \(notes\.md\)/);
    assert.ok(line.length < 300, `${line.length} chars`);
  });
});

describe('log, branch and trailer parsers', () => {
  it('reads -z log records', () => {
    const record = [OID, 'aaaaaaa', 'Ann', 'ann@x', '2024-01-02T03:04:05+00:00', 'subject: with colon'].join('\x1f');
    assert.deepEqual(parseLog(`${record}\0\n${record}\0`), [
      { hash: OID, shortHash: 'aaaaaaa', author: 'Ann', email: 'ann@x', date: '2024-01-02T03:04:05+00:00', subject: 'subject: with colon' },
      { hash: OID, shortHash: 'aaaaaaa', author: 'Ann', email: 'ann@x', date: '2024-01-02T03:04:05+00:00', subject: 'subject: with colon' },
    ]);
  });

  it('reads trailers and picks Candor-Rant ids', () => {
    const trailers = parseTrailers('Candor-Rant: 01hx4k\nSigned-off-by: A <a@x>\ncandor-rant: 01hx4m\n');
    assert.deepEqual(candorRantIds(trailers), ['01hx4k', '01hx4m']);
  });
});
