import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

/**
 * Host-side checks that need a real extension host (run by `npm run
 * test:desktop`, which downloads VS Code). What a person sees of the same
 * things (the commands answering in the palette, the chat showing) is
 * checked in code-server by test/e2e/smoke.test.ts.
 */
export function registerActivationSuite(): void {
  describe('Candor in the desktop extension host', () => {
    it('activates and registers every command of the contract', async () => {
      const extension = vscode.extensions.getExtension('candor.candor');
      assert.ok(extension, 'the extension is installed');
      await extension.activate();
      assert.equal(extension.isActive, true, 'the extension is active');
      const commands = await vscode.commands.getCommands(true);
      const contributed = (extension.packageJSON as { contributes: { commands: Array<{ command: string }> } }).contributes.commands;
      assert.ok(contributed.length > 0, 'package.json contributes commands');
      for (const { command } of contributed) assert.ok(commands.includes(command), `${command} is registered`);
    });

    it("the chat view has Candor's provider, and Focus on Chat View runs", async () => {
      await vscode.extensions.getExtension('candor.candor')?.activate();
      // VS Code makes `<view id>.focus` for every contributed view; without a provider it shows an empty pane.
      assert.ok((await vscode.commands.getCommands(true)).includes('candor.chat.focus'), 'the view is contributed');
      // One provider per view id in an extension host: a second registration is refused while Candor's holds it.
      assert.throws(
        () => vscode.window.registerWebviewViewProvider('candor.chat', { resolveWebviewView: () => undefined }).dispose(),
        /already registered/,
        "Candor's provider holds the chat view",
      );
      await vscode.commands.executeCommand('candor.chat.focus');
    });
  });
}
