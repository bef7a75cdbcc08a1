import * as vscode from 'vscode';
import { listSessions } from '../../core/session/listing';

/**
 * Open Session…: the saved sessions of `sessionsDir`, newest first, their
 * titles redacted. Resolves to the file picked; none when there is nothing
 * to pick (said so) or the user dismissed the list.
 */
export async function pickSession(sessionsDir: string, currentId: string, redact: (text: string) => string): Promise<string | undefined> {
  const sessions = listSessions(sessionsDir);
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage('There are no saved sessions yet.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: redact(s.title), description: s.updated.replace('T', ' ').slice(0, 16), detail: s.id === currentId ? 'current' : undefined, file: s.file })),
    { title: 'Candor: Open Session…', placeHolder: 'Reopen a past session' },
  );
  return pick?.file;
}
