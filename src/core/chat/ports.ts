import type { PromptCount } from '../provider/serverCount';
import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import type { PromptSource } from '../prompt/systemPrompt';
import type { Session } from '../session/session';
import type { ChatModel } from '../provider/chatModel';
import type { ContextGate } from '../context/gate';
import type { Identity } from '../modelIdentity';
import type { DriftSummary, OverflowEvent } from '../context/driftEvents';
import type { Overflow } from '../provider/overflow';
import type { ServerKind } from '../provider/localServers';
import type { TokenCounter } from '../context/estimator';
import type { Compactor } from './compactor';
import type { ToolHost } from './tools';
import type { BusyMessage, DeltaMessage, EntryMessage, GaugeMessage } from './viewMessages';

// What the chat loop needs from outside it, and what it tells the outside.

export interface ChatSettings {
  /** The window in use: the smaller of what the user set and what the server runs with (docs/architecture.md, "Local model servers"). */
  readonly contextWindow: number;
  /** Where the window came from: the user's setting, the local server's report, or the default. */
  readonly windowSource?: 'settings' | 'server' | 'default';
  /** The window the server says it runs with (per slot), when it said one. */
  readonly serverWindow?: number;
  /** `candor.contextWindow` as the user set it, when set. */
  readonly windowSetting?: number;
  readonly thresholdPercent: number;
  readonly keepTurns: number;
  /** `candor.maxOutputTokens`: what a reply cut at the output limit names. */
  readonly maxOutputTokens?: number;
  /** The kind of local server in use, when it is one of `candor.localServers`. */
  readonly serverKind?: ServerKind;
  /** The server takes a reply's thinking back (llama.cpp's `supports_preserve_reasoning`): only then is it sent. */
  readonly preserveReasoning?: boolean;
}

/**
 * What the conversation tells the view besides its records, whose entries
 * come from the session's one live mapping (`TranscriptPages`): a reply while
 * it streams (its entry, then its deltas, until its record's entry replaces
 * it under the same id), whether a turn is running, and the gauge.
 */
export type ChatEvent = EntryMessage | DeltaMessage | BusyMessage | GaugeMessage;

/** One request as the trace store keeps it (no message text, no key). */
export interface RequestTrace {
  readonly session: string;
  readonly turn: string;
  /** The transcript entry of the reply, for thumbs up/down. */
  readonly replyId: string;
  readonly model: string;
  readonly provider: string;
  readonly completed: boolean;
  readonly error?: string;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  readonly estimate: number;
  readonly toolCalls: readonly string[];
  readonly durationMs: number;
  /** The prompt the request's system message was built from: the trace writer tags its registry version. Never stored. */
  readonly prompt: string;
}

export interface ConversationDeps {
  readonly session: Session;
  readonly gate: ContextGate;
  /** The identity requests would have now (settings), for the gauge between requests. */
  readonly identity: () => Identity;
  readonly driftTotals: () => DriftSummary;
  /**
   * The tokenizer of a model, or undefined for a model with none known. A
   * model without one (or a conversation given none) is counted with the
   * heuristic, calibrated against the provider's own counts.
   */
  readonly tokenizer?: (model: string) => TokenCounter | undefined;
  /** The server's own count of a prompt, when the server in use has one (asked off the send path; docs/architecture.md, "Exact counts"). */
  readonly serverCount?: (identity: Identity) => PromptCount | undefined;
  /** The model of the settings in force; its policy says how requests are retried and cut. */
  readonly provider: () => Promise<ChatModel>;
  readonly settings: () => ChatSettings;
  /** Builds one request's system message, listing exactly the tools that request sends. */
  readonly prompt: PromptSource;
  readonly tools: () => ToolHost;
  readonly compactor: Compactor;
  readonly emit: (event: ChatEvent) => void;
  readonly log: Logger;
  /** Told about every request that ended, completed or not. */
  readonly trace?: (trace: RequestTrace) => void;
  /** Writes an `overflow` event to `drift.jsonl`. */
  readonly recordOverflow?: (event: OverflowEvent) => void;
  /**
   * The provider refused a request as too large: the host takes the window
   * it stated and reads the server's window again, before the settings are
   * asked anew.
   */
  readonly onOverflow?: (identity: Identity, overflow: Overflow) => Promise<void>;
  /**
   * The keys to keep out of notices, partial replies and log lines (the
   * session file and the view). Without it, only credential patterns are
   * removed. The user's own messages are kept as typed.
   */
  readonly secrets?: SecretSet;
}
