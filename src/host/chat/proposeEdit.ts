import * as vscode from 'vscode';
import type { EditProposal } from '../../core/tools/agentTools';
import { confine } from '../../core/workspace';
import { Disposable } from '../platform/lifecycle';

const SCHEME = 'candor-proposal';

/**
 * `propose_edit`: the proposal is shown as a diff against the editor's
 * buffer; on Accept it is applied to that buffer as a WorkspaceEdit (undoable,
 * not saved), on Reject nothing changes. It never writes behind an unsaved
 * buffer and never uses git.
 */
export class EditProposals extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly proposed = new Map<string, string>();
  private next = 0;

  constructor() {
    super();
    this.register(vscode.workspace.registerTextDocumentContentProvider(SCHEME, this));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.proposed.get(uri.query) ?? '';
  }

  async propose(proposal: EditProposal, signal: AbortSignal): Promise<string> {
    const roots = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const target = await confine(roots, proposal.path);
    const uri = vscode.Uri.file(target.absolute);
    const exists = await vscode.workspace.fs.stat(uri).then(() => true, () => false);
    const document = exists ? await vscode.workspace.openTextDocument(uri) : undefined;
    const current = document?.getText() ?? '';
    let next: string;
    if (proposal.content !== undefined) next = proposal.content;
    else {
      const oldText = proposal.oldText ?? '';
      const at = current.indexOf(oldText);
      if (oldText === '' || at < 0) return `Not applied: old_text was not found in ${target.display}${document?.isDirty ? ' (the editor buffer, which has unsaved changes)' : ''}. Read the file again.`;
      if (current.indexOf(oldText, at + 1) >= 0) return `Not applied: old_text occurs more than once in ${target.display}; give a longer passage.`;
      next = current.slice(0, at) + (proposal.newText ?? '') + current.slice(at + oldText.length);
    }
    if (next === current) return `Nothing to change: ${target.display} already has that content.`;

    const key = String(this.next++);
    this.proposed.set(key, next);
    try {
      const right = vscode.Uri.from({ scheme: SCHEME, path: `/${target.display}`, query: key });
      const left = exists ? uri : vscode.Uri.from({ scheme: SCHEME, path: `/${target.display} (new)`, query: 'empty' });
      await vscode.commands.executeCommand('vscode.diff', left, right, `Candor proposes: ${target.display}`, { preview: true });
      const decision = await Promise.race([
        vscode.window.showInformationMessage(`Candor proposes an edit to ${target.display}.`, 'Accept', 'Reject'),
        new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true })),
      ]);
      if (decision !== 'Accept') return `The user rejected the edit to ${target.display}; nothing was changed.`;
      const edit = new vscode.WorkspaceEdit();
      if (document) {
        const latest = await vscode.workspace.openTextDocument(uri);
        if (latest.getText() !== current) return `Not applied: ${target.display} changed while the user was deciding. Read it again.`;
        edit.replace(uri, new vscode.Range(latest.positionAt(0), latest.positionAt(current.length)), next);
      } else {
        edit.createFile(uri, { ignoreIfExists: true });
        edit.insert(uri, new vscode.Position(0, 0), next);
      }
      const applied = await vscode.workspace.applyEdit(edit);
      if (!applied) return `VS Code could not apply the edit to ${target.display}.`;
      await vscode.window.showTextDocument(uri, { preview: false });
      return `The user accepted the edit; it is in the editor buffer of ${target.display}, not saved yet (undo with Ctrl+Z).`;
    } finally {
      this.proposed.delete(key);
    }
  }
}
