import type * as vscode from 'vscode';
import type { DisposableStore } from '../platform/lifecycle';
import type { Ports } from '../ports';
import { PromptEvolution } from './promptEvolution';

export interface PromptEvolutionRegistration {
  /** The current chat session's id: the review panel's buttons and the traces name it. */
  readonly currentSession: () => string;
  /** A rant was saved: its session's traces are linked to it. */
  readonly rantSaved: vscode.Event<{ readonly id: string; readonly session: string | null }>;
}

/** Prompt evolution: the prompt in use, the traces of every request, the evolution task and the review panel. */
export function registerPromptEvolution(store: DisposableStore, ports: Ports, deps: PromptEvolutionRegistration): PromptEvolution {
  const promptEvolution = store.add(new PromptEvolution({ ...ports, extensionUri: ports.context.extensionUri }));
  ports.view.router.register('prompt evolution', promptEvolution.messageHandlers(deps.currentSession));
  store.add(deps.rantSaved((rant) => promptEvolution.linkRant(rant.id, rant.session)));
  return promptEvolution;
}
