import type { GuardOptions, UnsavedBufferSource } from '../git';
import type { Logger } from '../log';
import type { ChatModel, TextModel } from '../provider/chatModel';
import type { DetectOptions, SandboxMode } from './sandbox';

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
  /** Each gate command's timeout. */
  readonly timeoutMs: number;
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
export const REPOSITORY_HINT = 'set "candor.evolution.repository" in your user settings to a local git checkout of the agent\'s own source (a clone of Candor, or of the agent you develop)';
