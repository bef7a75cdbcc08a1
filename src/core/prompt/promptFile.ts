import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { confine } from '../workspace/confine';
import { WorkspaceToolError } from '../workspace/errors';
import { BUILT_IN_PROMPT } from './systemPrompt';
import { isKindError } from '../kindError';

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
    if (isKindError(err, WorkspaceToolError, 'not-found')) return { status: 'absent', why: 'missing' };
    if (isKindError(err, WorkspaceToolError)) return { status: 'refused', reason: `${PROMPT_FILE} was not read: ${err.message}` };
    throw err;
  }
  const open = openText(real);
  if (open !== undefined) return { status: 'ok', path: real, text: open };
  const stat = await fs.stat(real);
  if (!stat.isFile()) return { status: 'refused', reason: `${PROMPT_FILE} is not a regular file` };
  return { status: 'ok', path: real, text: await fs.readFile(real, 'utf8') };
}

/** The prompt in force, as a run or a rollback saw it. */
export interface PromptSnapshot {
  readonly source: 'built-in' | 'workspace';
  readonly text: string;
  /** Why `.candor/prompt.md` was not read (a symlink out of the folder, say): it is never written either. */
  readonly refused?: string;
}

export type PromptWrite = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** The workspace's prompt file as the host (editor buffers, WorkspaceEdit) or the CLI (the disk) reaches it. */
export interface PromptFilePort {
  /** The prompt in force now. */
  read(): Promise<PromptSnapshot>;
  /** Makes `text` the file's content, creating it if needed; `label` names the change where the editor shows one. */
  write(text: string, label: string): Promise<PromptWrite>;
}

export function promptSnapshot(read: PromptFileRead): PromptSnapshot {
  if (read.status === 'ok') return { source: 'workspace', text: read.text };
  return { source: 'built-in', text: BUILT_IN_PROMPT, ...(read.status === 'refused' ? { refused: read.reason } : {}) };
}

/**
 * Why a prompt computed from `expected` may not be written over `now`;
 * undefined when it may. A change made meanwhile (by hand, in the editor or
 * on disk; a file created or deleted) wins over the run: it is never
 * overwritten.
 */
export function promptWriteConflict(expected: PromptSnapshot, now: PromptSnapshot): string | undefined {
  if (now.refused !== undefined) return `${now.refused}; nothing was written`;
  if (now.source !== expected.source || now.text !== expected.text) return `${PROMPT_FILE} changed since the run began`;
  return undefined;
}

/** Writes `text` unless the prompt is no longer `expected` (see promptWriteConflict). */
export async function writePromptIfUnchanged(file: PromptFilePort, text: string, expected: PromptSnapshot, label: string): Promise<PromptWrite> {
  const conflict = promptWriteConflict(expected, await file.read());
  if (conflict !== undefined) return { ok: false, reason: conflict };
  return file.write(text, label);
}

/**
 * The prompt file on disk, for the CLI: read under the same confinement as
 * in VS Code (the CLI's workspace counts as trusted: its user named it),
 * written atomically (a temp file renamed over it).
 */
export function diskPromptFile(folder: string): PromptFilePort {
  return {
    read: async () => promptSnapshot(await readPromptFile(folder, true)),
    write: async (text) => {
      const file = path.join(folder, ...PROMPT_FILE.split('/'));
      await fs.mkdir(path.dirname(file), { recursive: true });
      const temp = `${file}.candor-${process.pid}.tmp`;
      try {
        await fs.writeFile(temp, text);
        await fs.rename(temp, file);
      } catch (err) {
        await fs.rm(temp, { force: true });
        throw err;
      }
      return { ok: true };
    },
  };
}
