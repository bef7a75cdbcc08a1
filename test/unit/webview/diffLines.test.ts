import * as assert from 'node:assert/strict';
import { diffLineKinds } from '../../../webview/diffLines';

describe('a proposal diff in the chat: each line shown as what it is', () => {
  it('a removed SQL comment (`-- note`) and an added `++ i;` are changes, not file headers', () => {
    // Tried: a proposal that deletes the line `-- note` and adds `++ i;`: their diff lines read `--- note` and `+++ i;`, as file headers do.
    const diff = ['--- a/query.sql', '+++ b/query.sql', '@@ -1,3 +1,3 @@', ' select 1;', '--- note', '+++ i;', '-old', '+new', '\\ No newline at end of file'];
    assert.deepEqual(diffLineKinds(diff), ['file', 'file', 'hunk', 'context', 'removed', 'added', 'removed', 'added', 'meta']);
  });

  it('the headers of a second file after the first one\'s hunks are headers again', () => {
    const diff = ['diff --git a/x b/x', 'index 1..2 100644', '--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', 'diff --git a/y b/y', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '--- c'];
    assert.deepEqual(diffLineKinds(diff), ['file', 'file', 'file', 'file', 'hunk', 'removed', 'added', 'file', 'file', 'file', 'hunk', 'removed']);
  });
});
