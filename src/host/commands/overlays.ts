import * as path from 'node:path';
import * as vscode from 'vscode';
import type { EditProposals } from '../chat/proposeEdit';
import { editorUri, realFileOf } from '../platform/editorFiles';
import { isInside } from '../../core/realPath';

/** A file of the view whose content is not the disk's: an unsaved buffer, or a pending proposal (which wins). */
export interface Overlay {
  /** Relative to the workspace folder, `/`-separated. */
  readonly path: string;
  readonly bytes: Uint8Array;
}

/**
 * What the editor shows of the folder `root` (a real path) and the disk does not hold:
 * every unsaved buffer, then every pending proposal, each encoded in its
 * file's encoding. A text that cannot be written in it refuses the command,
 * with the reason (VS Code's own encoder says which).
 */
export async function editorOverlays(root: string, proposals: EditProposals): Promise<Overlay[]> {
  const overlays = new Map<string, Overlay>();
  for (const document of vscode.workspace.textDocuments) {
    if (!document.isDirty) continue;
    // `root` is real; a folder opened through a symlinked path names its buffers by that path.
    const file = realFileOf(document);
    if (file === undefined || !isInside(root, file)) continue;
    const relative = relativeOf(root, file);
    overlays.set(relative, { path: relative, bytes: await encode(document.getText(), document, relative) });
  }
  for (const proposal of await proposals.overlays()) {
    if (!isInside(root, proposal.file)) continue;
    const relative = relativeOf(root, proposal.file);
    const uri = editorUri(proposal.file);
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    overlays.set(relative, { path: relative, bytes: await encode(proposal.content, open, relative, uri) });
  }
  return [...overlays.values()];
}

async function encode(text: string, document: vscode.TextDocument | undefined, relative: string, uri?: vscode.Uri): Promise<Uint8Array> {
  try {
    if (document) return await vscode.workspace.encode(text, { encoding: document.encoding });
    return uri ? await vscode.workspace.encode(text, { uri }) : await vscode.workspace.encode(text);
  } catch (err) {
    throw new Error(`${relative} cannot be written in its encoding${document ? ` (${document.encoding})` : ''}, so the command was not run: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function relativeOf(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}
