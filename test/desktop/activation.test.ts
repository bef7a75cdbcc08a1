import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

/** Host-side checks that need a real extension host (run by `npm run test:desktop`). */
export function registerActivationSuite(): void {
  describe('Candor in the desktop extension host', () => {
    it('activates and registers every command of the contract', async () => {
      const extension = vscode.extensions.getExtension('candor.candor');
      assert.ok(extension, 'the extension is installed');
      await extension.activate();
      const commands = await vscode.commands.getCommands(true);
      const contributed = (extension.packageJSON as { contributes: { commands: Array<{ command: string }> } }).contributes.commands;
      for (const { command } of contributed) assert.ok(commands.includes(command), `${command} is registered`);
    });

    it('the chat view can be focused', async () => {
      await vscode.commands.executeCommand('candor.chat.focus');
    });
  });
}
