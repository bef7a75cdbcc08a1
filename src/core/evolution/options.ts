import type { GuardOptions, UnsavedBufferSource } from '../git';
import type { Logger } from '../log';
import type { ChatModel, TextModel } from '../provider/chatModel';
import type { DetectOptions, SandboxMode } from '../sandbox/sandbox';
import type { EvolutionLimits } from '../settings/resolve';
import type { CiCulpritResult } from '../github/ciHistory';

export type { EvolutionLimits };

/** What an evolution run is given (docs/architecture.md, "Evolution"); the host's task and the CLI fill it from the settings. */

export type EvolutionPhase = 'triage' | 'scratch clone' | 'gate HEAD' | 'revert' | 'change' | 'gate' | 'ship' | 'record';

export interface EvolutionOptions {
  /**
   * `candor.evolution.repository`: a local git checkout of the agent itself,
   * the only repository evolution clones, gates and changes. Unset or '':
   * the run triages and routes, and no code changes anywhere (`triage-only`).
   */
  readonly repository?: string;
  readonly dataDir: string;
  /** `candor.evolution.testCommand` (`npm test`). */
  readonly testCommand: string;
  readonly buildCommand?: string;
  /** '' = what the lock file implies. */
  readonly setupCommand?: string;
  readonly maxChangedLines: number;
  readonly maxChangedFiles: number;
  /** `candor.evolution.maxChangedBytes`: checked before anything of the change is added to git. */
  readonly maxChangedBytes?: number;
  /** `candor.evolution.rerunFailedGate` (default true): a failed gate runs once more to tell a flaky test from a broken change. */
  readonly rerunFailedGate?: boolean;
  /** `candor.evolution.sandboxUid`: the unprivileged uid the commands run as when Candor is root. */
  readonly sandboxUid?: number;
  /** `candor.evolution.environment`: variable names passed to the commands beside the allow-list. */
  readonly environment?: readonly string[];
  /** `candor.evolution.limits.*`. */
  readonly limits?: EvolutionLimits;
  /** Each gate command's timeout. */
  readonly timeoutMs: number;
  /**
   * CI's culprit on the default branch, read from the GitHub API by the
   * caller when the run starts (src/core/github/ciHistory.ts): a Candor
   * change whose CI failed while its parent's passed is reverted first.
   */
  readonly ciCulprit?: CiCulpritResult;
  /** The model of the change phase (and of triage unless `triageModel` is given). Undefined: triage by rules, no change. */
  readonly model?: ChatModel;
  readonly triageModel?: TextModel;
  /** The agent's README when the repository has none, or none is set (the extension's own); context for triage. */
  readonly agentReadme?: string;
  /** The editor's unsaved buffers (the host); the CLI has none. Any inside the agent's repository make it dirty. */
  readonly unsaved?: UnsavedBufferSource;
  /** Values kept out of every command's environment (the API key). */
  readonly secrets?: readonly string[];
  readonly signal?: AbortSignal;
  /** Model requests in the change phase at most. Default 16. */
  readonly maxRounds?: number;
  readonly clock?: () => Date;
  readonly git?: GuardOptions;
  /** `candor.evolution.sandbox`; default 'required': no command runs outside the OS sandbox. */
  readonly sandbox?: SandboxMode;
  /** Where to look for the sandbox (a test points it at a missing bwrap). */
  readonly sandboxProbe?: DetectOptions;
}

export interface EvolutionIO {
  /** One line for the terminal. */
  print(line: string): void;
  onPhase?(phase: EvolutionPhase): void;
  /** Raw output of the gate commands, as it comes. */
  onOutput?(chunk: string): void;
  readonly log?: Logger;
}

/** How to set the agent's repository, for people. */
export const REPOSITORY_HINT = 'set "candor.evolution.repository" to a local git checkout of the agent\'s own source (a clone of Candor, or of the agent you develop). It is a user setting: in a remote window (code-server, SSH, a container) it is on the Remote tab of the Settings editor';
