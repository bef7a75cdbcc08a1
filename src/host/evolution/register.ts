import type * as vscode from 'vscode';
import type { DisposableStore } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import type { Ports } from '../ports';
import { EvolutionFeature } from './evolution';
import { EvolutionBranches } from './branches';
import { dismissRantCommand } from './dismiss';
import { rantsMessage } from './rantsView';
import { PullRequests } from './pullRequests';
import type { GitHubTokens } from '../github/tokens';

export interface EvolutionRegistration {
  /** A rant was saved (from the chat or the palette): the rant list refreshes. */
  readonly rantSaved: vscode.Event<unknown>;
  /** GitHub's tokens (`registerGitHub`), for pull requests and their CI. */
  readonly tokens: GitHubTokens;
}

/** What Clean Up Data needs of evolution. */
export interface EvolutionActivity {
  /** True while an evolution run uses the scratch clones. */
  readonly isRunning: () => boolean;
  /** Refreshes the rant list in the chat view. */
  readonly changed: () => void;
}

/**
 * Rants and evolution: the evolution task, the branches it ships, the rant
 * list in the chat view and its buttons, pull requests and their CI.
 */
export function registerEvolution(store: DisposableStore, ports: Ports, deps: EvolutionRegistration): EvolutionActivity {
  const { dataDir, view } = ports;
  const changed = (): void => view.post(rantsMessage(dataDir));
  const branches = store.add(new EvolutionBranches(ports));
  const pullRequests = store.add(new PullRequests({ ...ports, tokens: deps.tokens, changed }));
  const evolution = store.add(new EvolutionFeature({ ...ports, changed, takeBranch: (branch) => branches.takeBranch(branch), openPullRequest: (branch) => pullRequests.open(branch), ciCulprit: (repository) => pullRequests.ciCulprit(repository) }));
  store.add(registerCommand('candor.openPullRequest', (branch?: unknown) => pullRequests.open(typeof branch === 'string' ? branch : undefined), ports.notify));
  pullRequests.resume();
  const dismiss = (id?: string): Promise<void> => dismissRantCommand({ dataDir, log: ports.log, changed }, id);
  store.add(registerCommand('candor.dismissRant', (id?: unknown) => dismiss(typeof id === 'string' ? id : undefined), ports.notify));
  view.router.register('evolution', {
    dismissRant: (message) => dismiss(message.id),
    takeBranch: (message) => branches.takeBranch(message.branch),
    showDiff: (message) => branches.showDiff(message.branch),
    openPullRequest: (message) => pullRequests.open(message.branch),
  });
  store.add(view.onDidBecomeReady(changed));
  store.add(deps.rantSaved(changed));
  return { isRunning: () => evolution.isRunning, changed };
}
