import * as vscode from 'vscode';
import type { ToolCall } from '../../core/chat/tools';
import type { Logger } from '../../core/log';
import { addProposal, applyEditRequest, isBaseUnchanged, latestProposals, pendingFor, pendingProposals, setProposalState } from '../../core/proposals/proposals';
import type { ProposalRecord } from '../../core/session/records';
import type { Session } from '../../core/session/session';
import type { EditProposal } from '../../core/tools/agentTools';
import { confineTarget } from '../../core/workspace';
import type { ProposalAnswer } from '../../protocol/chat';
import { editorUri, realFileOf } from '../platform/editorFiles';
import { Disposable } from '../platform/lifecycle';

const SCHEME = 'candor-proposal';

/**
 * `propose_edit` (docs/architecture.md, "Proposals"): the proposal is a
 * record of the session, pending, with its diff and Accept / Reject in the
 * chat; the tool returns at once. Accept applies it to the editor's buffer
 * as a WorkspaceEdit (undoable, not saved), only while the text it was made
 * against is still what the user has: otherwise it is stale. It never
 * writes behind an unsaved buffer and never uses git.
 */
export class EditProposals extends Disposable implements vscode.TextDocumentContentProvider {
  /** Proposals being applied: their own edit must not mark them stale. */
  private readonly applying = new Set<string>();

  constructor(
    /** The chat's current session, once loaded. */
    private readonly session: () => Session | undefined,
    private readonly log: Logger,
  ) {
    super();
    this.register(vscode.workspace.registerTextDocumentContentProvider(SCHEME, this));
    this.register(vscode.workspace.onDidChangeTextDocument((e) => this.markStaleIfChanged(e.document)));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const session = this.session();
    if (uri.query === 'empty' || !session) return '';
    return latestProposals(session.all()).get(uri.query)?.content ?? '';
  }

  async propose(proposal: EditProposal, call: ToolCall | undefined): Promise<string> {
    if (!call) throw new Error('propose_edit works only in a chat turn');
    const target = await confineTarget(workspaceRoots(), proposal.path);
    const uri = editorUri(target.absolute);
    const current = await currentText(uri);
    const earlier = pendingFor(call.session.all(), target.absolute);
    // A pending proposal for the file is built on, while the user's text is still what it was made against.
    const buildOn = earlier !== undefined && isBaseUnchanged(earlier, current) ? earlier.content : undefined;
    if (earlier !== undefined && buildOn === undefined) setProposalState(call.session, earlier, 'stale');
    const from = buildOn ?? current ?? '';
    const made = applyEditRequest(from, proposal, target.display);
    if ('refused' in made) return `Not proposed: ${made.refused}${buildOn !== undefined ? ' (it was looked for in your pending proposal for this file, which the edit builds on)' : ''}`;
    if (made.next === from) return `Nothing to change: ${target.display} already has that content${buildOn !== undefined ? ' in your pending proposal' : ''}.`;
    const record = addProposal(call.session, { turn: call.turn, file: target.absolute, path: target.display, base: current ?? '', created: current === undefined, from, content: made.next });
    this.log.info(`proposal ${record.id}: ${target.display} (${current === undefined ? 'new file' : 'edit'})`);
    return `Proposed: an edit to ${target.display}, pending the user's decision (they see its diff in the chat with Accept and Reject). Commands you run see it already. Go on; do not wait for the decision.`;
  }

  /** Proposals whose Accept or Reject is being carried out: a second answer (a double click, a forged message) waits for nothing and does nothing. */
  private readonly deciding = new Set<string>();

  /** Accept, Reject or Show Diff, from the chat. */
  async answer(message: ProposalAnswer): Promise<void> {
    if (message.decision !== 'show') {
      if (this.deciding.has(message.id)) return;
      this.deciding.add(message.id);
    }
    try {
      await this.decide(message);
    } finally {
      if (message.decision !== 'show') this.deciding.delete(message.id);
    }
  }

  private async decide(message: ProposalAnswer): Promise<void> {
    const session = this.session();
    const proposal = session ? latestProposals(session.all()).get(message.id) : undefined;
    if (!session || !proposal) {
      void vscode.window.showWarningMessage('Candor: that proposal is not in the current session.');
      return;
    }
    if (message.decision === 'show') return this.showDiff(proposal);
    // A stale proposal can still be rejected (dismissed); only a pending one can be accepted.
    const open = proposal.state === 'pending' || (proposal.state === 'stale' && message.decision === 'reject');
    if (!open) {
      void vscode.window.showInformationMessage(`Candor: the proposal for ${proposal.path} is ${proposal.state} already.`);
      return;
    }
    if (message.decision === 'reject') {
      setProposalState(session, proposal, 'rejected');
      return;
    }
    await this.accept(session, proposal);
  }

  /** The pending proposals of the current session that still apply, for the command view (stale ones are marked so on the way). */
  async overlays(): Promise<Array<{ readonly file: string; readonly content: string }>> {
    const session = this.session();
    if (!session) return [];
    const live: Array<{ file: string; content: string }> = [];
    for (const proposal of pendingProposals(session.all())) {
      if (isBaseUnchanged(proposal, await currentText(editorUri(proposal.file)))) live.push({ file: proposal.file, content: proposal.content });
      else setProposalState(session, proposal, 'stale');
    }
    return live;
  }

  private async accept(session: Session, proposal: ProposalRecord): Promise<void> {
    const uri = editorUri(proposal.file);
    const current = await currentText(uri);
    if (!isBaseUnchanged(proposal, current)) {
      setProposalState(session, proposal, 'stale');
      void vscode.window.showWarningMessage(`Candor: ${proposal.path} changed since the edit was proposed, so it was not applied. Ask Candor to propose it again, or use Show Diff.`);
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    if (current !== undefined) {
      const document = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(document.positionAt(0), document.positionAt(current.length)), proposal.content);
    } else {
      edit.createFile(uri, { ignoreIfExists: true });
      edit.insert(uri, new vscode.Position(0, 0), proposal.content);
    }
    this.applying.add(proposal.id);
    try {
      if (!(await vscode.workspace.applyEdit(edit))) {
        void vscode.window.showErrorMessage(`Candor: VS Code could not apply the edit to ${proposal.path}; it is still pending.`);
        return;
      }
    } finally {
      this.applying.delete(proposal.id);
    }
    setProposalState(session, proposal, 'accepted');
    await vscode.window.showTextDocument(uri, { preview: false });
  }

  private async showDiff(proposal: ProposalRecord): Promise<void> {
    const right = vscode.Uri.from({ scheme: SCHEME, path: `/${proposal.path}`, query: proposal.id });
    const left = proposal.created ? vscode.Uri.from({ scheme: SCHEME, path: `/${proposal.path} (new)`, query: 'empty' }) : editorUri(proposal.file);
    await vscode.commands.executeCommand('vscode.diff', left, right, `Candor proposes: ${proposal.path}`, { preview: true });
  }

  /** Every keystroke asks: the files with a pending proposal, looked up again only when the session has new records. */
  private pendingFiles: { session: Session; records: number; files: ReadonlySet<string> } | undefined;

  /** Each document's real path, looked up once: this runs on every keystroke. */
  private readonly realFiles = new WeakMap<vscode.TextDocument, string | undefined>();

  private realFile(document: vscode.TextDocument): string | undefined {
    if (!this.realFiles.has(document)) this.realFiles.set(document, realFileOf(document));
    return this.realFiles.get(document);
  }

  private markStaleIfChanged(document: vscode.TextDocument): void {
    const session = this.session();
    if (!session || document.uri.scheme !== 'file') return;
    const records = session.all();
    if (this.pendingFiles?.session !== session || this.pendingFiles.records !== records.length) {
      this.pendingFiles = { session, records: records.length, files: new Set(pendingProposals(records).map((p) => p.file)) };
    }
    if (this.pendingFiles.files.size === 0) return;
    // Proposals name files by their real path; the editor, by the path the folder was opened by.
    const file = this.pendingFiles.files.has(document.uri.fsPath) ? document.uri.fsPath : this.realFile(document);
    if (file === undefined || !this.pendingFiles.files.has(file)) return;
    const proposal = pendingFor(records, file);
    if (!proposal || this.applying.has(proposal.id)) return;
    if (!isBaseUnchanged(proposal, document.getText())) setProposalState(session, proposal, 'stale');
  }
}

function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
}

/** What the user has of the file: its buffer when open, else its content on disk; undefined when it does not exist. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  const exists = await vscode.workspace.fs.stat(uri).then(() => true, () => false);
  if (!exists) return undefined;
  return (await vscode.workspace.openTextDocument(uri)).getText();
}
