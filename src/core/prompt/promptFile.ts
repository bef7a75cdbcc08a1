import * as fs from 'node:fs/promises';
import { confine } from '../workspace/confine';
import { WorkspaceToolError } from '../workspace/errors';

/** Where a workspace keeps its own system prompt (meant to be committed). */
export const PROMPT_FILE = '.candor/prompt.md';

export type PromptFileRead =
  /** Untrusted workspace, no folder, or no such file: the built-in prompt applies. */
  | { readonly status: 'absent'; readonly why: 'untrusted' | 'no-folder' | 'missing' }
  /** The file leads outside the folder (a symlink, say to /proc/self/environ): never read. */
  | { readonly status: 'refused'; readonly reason: string }
  | { readonly status: 'ok'; readonly path: string; readonly text: string };

/**
 * Reads `.candor/prompt.md` of `folder` under the trust rules
 * (docs/architecture.md, "Settings and trust"): nothing in an untrusted
 * workspace, and only through the file tools' confinement, so a symlink that
 * leads out of the folder is refused rather than followed. `openText` is the
 * editor's unsaved text of the confined path, when there is one.
 */
export async function readPromptFile(
  folder: string | undefined,
  trusted: boolean,
  openText: (realPath: string) => string | undefined = () => undefined,
): Promise<PromptFileRead> {
  if (!trusted) return { status: 'absent', why: 'untrusted' };
  if (folder === undefined) return { status: 'absent', why: 'no-folder' };
  let real: string;
  try {
    real = (await confine([folder], PROMPT_FILE)).absolute;
  } catch (err) {
    if (err instanceof WorkspaceToolError && err.kind === 'not-found') return { status: 'absent', why: 'missing' };
    if (err instanceof WorkspaceToolError) return { status: 'refused', reason: `${PROMPT_FILE} was not read: ${err.message}` };
    throw err;
  }
  const open = openText(real);
  if (open !== undefined) return { status: 'ok', path: real, text: open };
  const stat = await fs.stat(real);
  if (!stat.isFile()) return { status: 'refused', reason: `${PROMPT_FILE} is not a regular file` };
  return { status: 'ok', path: real, text: await fs.readFile(real, 'utf8') };
}
