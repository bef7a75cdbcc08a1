import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { memoryPath } from '../../../../src/core/memory/location';
import { workspaceIdFor } from '../../../../src/core/workspaceId';
import { MemoryError } from '../../../../src/core/memory/errors';

describe('memory location', () => {
  const dataDir = path.resolve('/data/candor');
  const folder = path.resolve('/home/ada/projects/My App');

  it('defaults to <dataDir>/memory/<workspace-id>/memory.md', () => {
    assert.equal(memoryPath({ dataDir, workspaceId: 'my-app-0123456789ab' }), path.join(dataDir, 'memory', 'my-app-0123456789ab', 'memory.md'));
  });

  it('a blank configured path means the default', () => {
    assert.equal(memoryPath({ dataDir, workspaceId: 'w', configuredPath: '  ', firstFolder: folder }), path.join(dataDir, 'memory', 'w', 'memory.md'));
  });

  it('an absolute configured path is used as is (normalized)', () => {
    const configured = path.resolve('/notes/./candor/memory.md');
    assert.equal(memoryPath({ dataDir, workspaceId: 'w', configuredPath: configured, firstFolder: folder }), path.normalize(configured));
  });

  it('a relative configured path is resolved against the first workspace folder', () => {
    assert.equal(memoryPath({ dataDir, workspaceId: 'w', configuredPath: 'docs/memory.md', firstFolder: folder }), path.join(folder, 'docs', 'memory.md'));
  });

  it('a relative configured path without a workspace folder is an error with a kind', () => {
    assert.throws(
      () => memoryPath({ dataDir, workspaceId: 'w', configuredPath: 'docs/memory.md' }),
      (err: unknown) => err instanceof MemoryError && err.kind === 'path-relative-without-folder',
    );
  });

  it('the workspace id is a sanitized folder name plus a short stable hash of the full path', () => {
    const id = workspaceIdFor(folder);
    assert.match(id, /^my-app-[0-9a-f]{12}$/);
    assert.equal(workspaceIdFor(folder), id, 'stable');
    assert.equal(workspaceIdFor(folder + path.sep), id, 'a trailing separator does not change it');
    assert.notEqual(workspaceIdFor(path.resolve('/other/My App')), id, 'same name, other folder, other id');
  });

  it('a folder name with nothing usable still gives a safe id', () => {
    assert.match(workspaceIdFor(path.resolve('/tmp/日本語')), /^workspace-[0-9a-f]{12}$/);
    assert.match(workspaceIdFor(path.parse(process.cwd()).root), /^workspace-[0-9a-f]{12}$/);
  });
});
