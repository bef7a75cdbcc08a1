import * as assert from 'node:assert/strict';
import { prepareScratch } from '../../../../src/core/evolution/scratch';
import { git, removeTempDirs, tempDir, workspaceRepo } from './helpers';

describe('a HEAD whose .gitattributes names a filter is refused at the start; one that only unsets one is not', () => {
  afterEach(() => removeTempDirs());
  const refused = (err: unknown): boolean => (err as { kind?: string }).kind === 'refused';

  it('a filter named in a nested .gitattributes (among several) refuses the run, naming that file and line', async () => {
    const ws = workspaceRepo({ '.gitattributes': '# filter=x in a comment does not count\n*.txt -filter text\n', 'docs/.gitattributes': '*.md filter=docs-render\n', 'docs/a.md': 'a\n' });
    const dataDir = tempDir('candor-data-');
    await assert.rejects(prepareScratch({ dataDir, repositoryRoot: ws, head: git(ws, 'rev-parse', 'HEAD').trim(), setupCommand: '' }), (err: unknown) =>
      refused(err) && /^HEAD's docs\/\.gitattributes names a filter driver \("\*\.md filter=docs-render"\)/.test((err as Error).message));
  });

  it('unsetting a filter (-filter, !filter) or naming one in a comment is no refusal', async () => {
    const ws = workspaceRepo({ '.gitattributes': '# filter=x\n*.txt -filter\n*.bin !filter diff\n', 'sub/.gitattributes': '*.js text eol=lf\n' });
    const dataDir = tempDir('candor-data-');
    const prepared = await prepareScratch({ dataDir, repositoryRoot: ws, head: git(ws, 'rev-parse', 'HEAD').trim(), setupCommand: '' });
    assert.equal(git(prepared.scratch.dir, 'rev-parse', 'HEAD').trim(), git(ws, 'rev-parse', 'HEAD').trim(), 'the clone is at HEAD');
    assert.deepEqual(prepared.gitlinks, []);
  });
});
