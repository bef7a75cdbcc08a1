import type { DisposableStore } from '../platform/lifecycle';
import type { Ports } from '../ports';
import { WorkspaceGit } from './workspaceGit';

/** The workspace's git state through the read-only guard, shown in the chat view's header (and read by the chat's tools). */
export function registerWorkspaceGit(store: DisposableStore, ports: Ports): WorkspaceGit {
  const { view, settings, secrets } = ports;
  const git = store.add(new WorkspaceGit(ports.log, (info) => view.post({ type: 'git', git: info }), () => ({
    secrets: secrets.values(),
    openRepositoryInParentFolders: settings.read().openRepositoryInParentFolders,
  })));
  store.add(view.onDidBecomeReady(() => view.post({ type: 'git', git: git.info })));
  return git;
}
