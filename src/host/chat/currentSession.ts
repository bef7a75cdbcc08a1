import * as path from 'node:path';

/**
 * Which session a window reopens. It is remembered per workspace
 * (`workspaceState`), so two windows never append to one session file.
 * Versions before kept one value for every window (`globalState`): the first
 * workspace to start after the update takes that session over and the
 * window-wide value is cleared, so nobody loses the session they had open
 * and no second window picks it up as well.
 */
export const CURRENT_SESSION_KEY = 'candor.currentSession';

/** What the function needs of a `vscode.Memento`. */
export interface StateStore {
  get(key: string): unknown;
  update(key: string, value: unknown): PromiseLike<void>;
}

export interface CurrentSession {
  /** The session file to reopen; none: start a new session. */
  readonly file: string | undefined;
  /** It came from the window-wide value, which is now cleared. */
  readonly migrated: boolean;
}

/** The session this workspace reopens. The stores are updated without waiting: Memento reads see an update at once. */
export function takeCurrentSession(workspace: StateStore, global: StateStore, sessionsDir: string): CurrentSession {
  const own = workspace.get(CURRENT_SESSION_KEY);
  if (isSessionFile(own, sessionsDir)) return { file: own, migrated: false };
  const shared = global.get(CURRENT_SESSION_KEY);
  if (!isSessionFile(shared, sessionsDir)) return { file: undefined, migrated: false };
  void workspace.update(CURRENT_SESSION_KEY, shared);
  void global.update(CURRENT_SESSION_KEY, undefined);
  return { file: shared, migrated: true };
}

/** A session file of this data folder: `<sessionsDir>/<id>.jsonl`, nothing above or beside it. */
function isSessionFile(value: unknown, sessionsDir: string): value is string {
  if (typeof value !== 'string' || !path.isAbsolute(value)) return false;
  const relative = path.relative(sessionsDir, value);
  return relative === path.basename(value) && relative.endsWith('.jsonl') && relative !== '.jsonl';
}
