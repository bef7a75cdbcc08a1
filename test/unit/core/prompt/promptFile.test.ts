import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { diskPromptFile, promptWriteConflict, writePromptIfUnchanged, type PromptSnapshot } from '../../../../src/core/prompt/promptFile';
import { BUILT_IN_PROMPT } from '../../../../src/core/prompt/systemPrompt';

describe('the prompt-file write conflict', () => {
  const workspace: PromptSnapshot = { source: 'workspace', text: 'Be brief.\n' };
  const builtIn: PromptSnapshot = { source: 'built-in', text: BUILT_IN_PROMPT };

  it('the prompt as the run began: no conflict', () => {
    assert.equal(promptWriteConflict(workspace, { ...workspace }), undefined);
    assert.equal(promptWriteConflict(builtIn, { ...builtIn }), undefined);
  });

  it('a hand edit, a file created or deleted meanwhile, or a file now refused: a conflict, and the change wins', () => {
    assert.match(promptWriteConflict(workspace, { source: 'workspace', text: 'Be brief.\nA hand edit.\n' }) ?? '', /changed since the run began/);
    assert.match(promptWriteConflict(builtIn, workspace) ?? '', /changed since the run began/, 'created since');
    assert.match(promptWriteConflict(workspace, builtIn) ?? '', /changed since the run began/, 'deleted since');
    // A file holding exactly the built-in text is still the user's file, not the built-in prompt.
    assert.match(promptWriteConflict(builtIn, { source: 'workspace', text: BUILT_IN_PROMPT }) ?? '', /changed/);
    const refused = { ...builtIn, refused: '.candor/prompt.md was not read: it leads outside the folder' };
    assert.match(promptWriteConflict(builtIn, refused) ?? '', /leads outside the folder; nothing was written/);
  });

  describe('on disk (the CLI)', () => {
    let root: string;
    let folder: string;
    const file = (): string => path.join(folder, '.candor', 'prompt.md');
    beforeEach(() => {
      root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-prompt-file-')));
      folder = path.join(root, 'ws');
      fs.mkdirSync(folder);
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it('unchanged: written in place of the old text, no temp file left; absent: created', async () => {
      const disk = diskPromptFile(folder);
      const start = await disk.read();
      assert.deepEqual(start, builtIn);
      assert.deepEqual(await writePromptIfUnchanged(disk, 'First.\n', start, 'promote'), { ok: true });
      assert.equal(fs.readFileSync(file(), 'utf8'), 'First.\n');
      const next = await disk.read();
      assert.deepEqual(await writePromptIfUnchanged(disk, 'Second.\n', next, 'promote'), { ok: true });
      assert.equal(fs.readFileSync(file(), 'utf8'), 'Second.\n');
      assert.deepEqual(fs.readdirSync(path.dirname(file())), ['prompt.md']);
    });

    it('changed since the run began: nothing written, the hand edit kept', async () => {
      fs.mkdirSync(path.dirname(file()));
      fs.writeFileSync(file(), 'Be brief.\n');
      const disk = diskPromptFile(folder);
      const start = await disk.read();
      fs.writeFileSync(file(), 'Be brief.\nA hand edit.\n');
      const written = await writePromptIfUnchanged(disk, 'Promoted.\n', start, 'promote');
      assert.equal(written.ok, false);
      assert.equal(fs.readFileSync(file(), 'utf8'), 'Be brief.\nA hand edit.\n');
    });

    it('a prompt file that is a symlink out of the folder is never written through', async () => {
      const outside = path.join(root, 'outside.txt');
      fs.writeFileSync(outside, 'the user\'s own file\n');
      fs.mkdirSync(path.dirname(file()));
      fs.symlinkSync(outside, file());
      // The trap: a plain write to the workspace path lands in the file outside.
      fs.writeFileSync(file(), 'through the link\n');
      assert.equal(fs.readFileSync(outside, 'utf8'), 'through the link\n');
      fs.writeFileSync(outside, 'the user\'s own file\n');

      const disk = diskPromptFile(folder);
      const start = await disk.read();
      assert.equal(start.source, 'built-in');
      assert.match(start.refused ?? '', /was not read/);
      const written = await writePromptIfUnchanged(disk, 'Promoted.\n', start, 'promote');
      assert.equal(written.ok, false);
      assert.match(written.ok ? '' : written.reason, /nothing was written/);
      assert.equal(fs.readFileSync(outside, 'utf8'), 'the user\'s own file\n');
      assert.equal(fs.lstatSync(file()).isSymbolicLink(), true);
    });
  });
});
