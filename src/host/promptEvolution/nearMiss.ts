import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import type { PromptFilePort } from '../../core/prompt/promptFile';
import { dismissNearMiss, promoteNearMiss, type ReviewResult } from '../../core/promptEvolution/nearMiss';
import type { PromptRegistry } from '../../core/promptEvolution/registry';
import type { Notifier } from '../platform/notify';

export interface NearMissDeps {
  readonly registry: () => Promise<PromptRegistry>;
  readonly promptFile: PromptFilePort;
  readonly log: Logger;
  readonly notify: Notifier;
  /** Is a prompt-evolution run going? Then the queue is left alone. */
  readonly running: () => boolean;
  /** The queue or the prompt in force changed: the review panel refreshes. */
  readonly changed: () => void;
}

/** The review queue's Dismiss button. */
export async function dismissCandidate(deps: NearMissDeps, candidateId: string): Promise<void> {
  if (refusedWhileRunning(deps)) return;
  report(deps, 'dismiss', await dismissNearMiss(await deps.registry(), candidateId));
}

/** The review queue's Promote Anyway button: a person overrides the gate, after saying so in a modal dialog. */
export async function promoteCandidateAnyway(deps: NearMissDeps, candidateId: string): Promise<void> {
  if (refusedWhileRunning(deps)) return;
  const answer = await vscode.window.showWarningMessage(
    `Promote ${candidateId} although the gate did not? It becomes the prompt in force, and the registry records it as your override.`,
    { modal: true },
    'Promote Anyway',
  );
  if (answer !== 'Promote Anyway') return;
  report(deps, 'promote anyway', await promoteNearMiss(await deps.registry(), deps.promptFile, candidateId));
}

function refusedWhileRunning(deps: NearMissDeps): boolean {
  if (!deps.running()) return false;
  void deps.notify.info('Candor: a prompt evolution run is going; try again when it has ended.');
  return true;
}

function report(deps: NearMissDeps, what: string, result: ReviewResult): void {
  if (result.ok) {
    deps.log.info(`prompt review: ${result.summary}`);
    void deps.notify.info(`Candor: ${result.summary}.`);
  } else {
    deps.log.warn(`prompt review ${what} refused: ${result.reason}`);
    void deps.notify.warn(`Candor: ${result.reason}.`);
  }
  deps.changed();
}
