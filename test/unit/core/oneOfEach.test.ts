import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoId } from '../../../src/core/evolution/paths';
import { rantBranch, revertBranch } from '../../../src/core/evolution/ship';
import { checkInvocation, FETCH_CONFIG, isHandoffBranchName } from '../../../src/core/git/allowList';
import { newId } from '../../../src/core/ids';
import { memoryPath } from '../../../src/core/memory/location';
import { NO_FOLDER_WORKSPACE_ID, workspaceIdFor, workspaceIdOf } from '../../../src/core/workspaceId';
import { parseWebviewMessage } from '../../../src/protocol/chat';
import { errorMessage } from '../../../src/core/errorMessage';
import { tempFolderPerTest } from '../../helpers/tempFolder';

describe('one of each', () => {
  describe('one workspace id', () => {
    const root = tempFolderPerTest('candor-ids-');

    it('memory, the prompt registry and the scratch clone name a folder the same way', () => {
      const folder = path.join(root(), 'My Project.v2_final');
      fs.mkdirSync(folder);
      const id = workspaceIdFor(folder);
      assert.match(id, /^my-project-v2-final-[0-9a-f]{12}$/);
      assert.equal(repoId(folder), id, 'the scratch clone');
      assert.equal(workspaceIdOf(folder), id, 'the registry scope');
      assert.equal(memoryPath({ dataDir: '/data', workspaceId: workspaceIdOf(folder) }), path.join('/data', 'memory', id, 'memory.md'));
      assert.equal(workspaceIdOf(undefined), NO_FOLDER_WORKSPACE_ID);
    });

    it('the scratch clone follows the real path: two symlinked paths to one repository share it', () => {
      const folder = path.join(root(), 'repo');
      fs.mkdirSync(folder);
      fs.symlinkSync(folder, path.join(root(), 'link'));
      assert.equal(repoId(path.join(root(), 'link')), repoId(folder));
    });
  });

  describe('one branch-name rule', () => {
    it('the names evolution ships pass the guard and the chat view\'s messages', () => {
      for (const branch of [rantBranch(newId()), revertBranch('0123456789ab')]) {
        assert.ok(isHandoffBranchName(branch), branch);
        assert.deepEqual(parseWebviewMessage({ type: 'takeBranch', branch }, { isBranchName: isHandoffBranchName }), { type: 'takeBranch', branch });
        assert.doesNotThrow(() => checkInvocation({ subcommand: 'fetch', config: [...FETCH_CONFIG, 'core.hooksPath=/tmp/no-hooks'], args: ['--no-tags', '/tmp/scratch', `refs/heads/${branch}:refs/heads/${branch}`] }));
      }
    });

    it('a name with "_" or "." is refused by all three: ship does not make it, the guard does not fetch it, the view\'s message is dropped', () => {
      for (const id of ['a_b', 'a.b', 'A']) {
        assert.throws(() => rantBranch(id), /cannot name an evolution branch/);
        const branch = `candor/rant-${id}`;
        assert.equal(isHandoffBranchName(branch), false, branch);
        assert.equal(parseWebviewMessage({ type: 'showDiff', branch }, { isBranchName: isHandoffBranchName }), undefined, branch);
      }
    });
  });

  it('one errorMessage: an Error\'s message, anything else as text', () => {
    assert.equal(errorMessage(new TypeError('bad')), 'bad');
    assert.equal(errorMessage('plain'), 'plain');
    assert.equal(errorMessage(42), '42');
  });
});
