import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { PROMPT_FILE, promptSnapshot, readPromptFile, type PromptFilePort, type PromptSnapshot, type PromptWrite } from '../../core/prompt/promptFile';

/**
 * `.candor/prompt.md` of the first workspace folder as VS Code holds it: the
 * editor's unsaved text wins over the disk; read only in a trusted workspace
 * and through the file tools' confinement (docs/architecture.md, "Settings
 * and trust"); written through a WorkspaceEdit and saved, like any edit of a
 * workspace file, so the user sees it and can undo it.
 */
export class WorkspacePromptFile implements PromptFilePort {
  /** The last reason the file was refused, so the log says it once, not per request. */
  private lastRefusal: string | undefined;

  constructor(private readonly log: Logger) {}

  async read(): Promise<PromptSnapshot> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const openText = (real: string): string | undefined =>
      vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.scheme === 'file' && d.uri.fsPath === real)?.getText();
    const snapshot = promptSnapshot(await readPromptFile(folder, vscode.workspace.isTrusted, openText));
    if (snapshot.refused !== undefined && snapshot.refused !== this.lastRefusal) this.log.warn(`${snapshot.refused}; the built-in prompt is used`);
    this.lastRefusal = snapshot.refused;
    return snapshot;
  }

  async write(text: string, label: string): Promise<PromptWrite> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return { ok: false, reason: 'no workspace folder is open' };
    const uri = vscode.Uri.joinPath(folder.uri, ...PROMPT_FILE.split('/'));
    const exists = await vscode.workspace.fs.stat(uri).then(() => true, () => false);
    const edit = new vscode.WorkspaceEdit();
    const metadata: vscode.WorkspaceEditEntryMetadata = { label, needsConfirmation: false };
    if (!exists) {
      edit.createFile(uri, { ignoreIfExists: true }, metadata);
      edit.insert(uri, new vscode.Position(0, 0), text, metadata);
    } else {
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(new vscode.Position(0, 0), doc.lineAt(doc.lineCount - 1).range.end), text, metadata);
    }
    if (!(await vscode.workspace.applyEdit(edit))) return { ok: false, reason: `VS Code did not apply the edit to ${PROMPT_FILE}` };
    const doc = await vscode.workspace.openTextDocument(uri);
    if (!(await doc.save())) return { ok: false, reason: `${PROMPT_FILE} was edited but could not be saved` };
    return { ok: true };
  }
}
