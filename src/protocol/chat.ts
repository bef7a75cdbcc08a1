/**
 * Typed messages between the extension host and the chat webview. The
 * webview says `ready` before the host posts anything; streamed replies
 * travel as deltas, never as the whole transcript again. Every message from
 * the webview is untrusted: `parseWebviewMessage` validates it, and what does
 * not fit is dropped (and logged by the caller). The protocol imports only
 * types from the core: a rule of the core that a message must meet comes in
 * from the host (`WebviewMessageRules`).
 */
import type { TranscriptEntry } from '../core/session/transcript';
import type { BusyMessage, DeltaMessage, EntryMessage, GaugeMessage, ReplaceTextMessage } from '../core/chat/viewMessages';
import type { GaugeHeadline } from '../core/context/gauge';
import type { DriftSummary } from '../core/context/driftEvents';
import type { RantStatus } from '../core/evolution/triage';

export type { TranscriptEntry, GaugeHeadline, ReplaceTextMessage };

export interface ProviderInfo {
  /** `tiny.gguf @ 127.0.0.1:18200`: the model's short name and where it runs (the offline demo's label offline). */
  readonly label: string;
  /** The model's short name (src/core/provider/modelName.ts): the header shows it, never a file path. */
  readonly name: string;
  /** `127.0.0.1:18200`; '' for the offline demo. */
  readonly host: string;
  /** The full model id and where it runs, for the header's tooltip. */
  readonly title: string;
  readonly model: string;
  readonly provider: string;
  readonly offline: boolean;
}

export interface GitInfo {
  readonly available: boolean;
  readonly summary: string;
  readonly readOnly: boolean;
  readonly reasons: readonly string[];
}

export interface DriftPoint {
  readonly ts: string;
  readonly delta: number;
  /** The largest estimate sent while the window was open (drawn beside |delta|). */
  readonly windowMaxEst: number;
  readonly model: string;
  readonly provider: string;
}

export interface DriftView {
  /** The totals, with switches counted apart from losses. */
  readonly totals: DriftSummary;
  readonly openWindow?: { readonly since: string; readonly reason: string; readonly model: string; readonly provider: string };
  readonly points: readonly DriftPoint[];
  readonly skippedLines: number;
}

export interface RantView {
  readonly id: string;
  readonly ts: string;
  readonly text: string;
  /** triage.jsonl's status (docs/architecture.md, "Evolution"). */
  readonly status: RantStatus;
  readonly class: string | null;
  /** `confusion`: the explanation shown with the rant. */
  readonly answer: string | null;
  /** `duplicate`: the rant it repeats. */
  readonly duplicateOf: string | null;
  readonly branch: string | null;
  readonly commit: string | null;
}

export interface RunView {
  readonly run: string;
  readonly ts: string;
  readonly outcome: string;
  readonly reason: string;
  readonly branch: string | null;
  readonly diffstat: string | null;
  readonly gateTail: string | null;
  readonly gatePassed: boolean | null;
  /** It failed, then passed, on the same tree: a flaky gate, not a verdict on the change. */
  readonly gateFlaky: boolean;
  /** What the test runner's summary counted; null when it printed none (or no gate ran). */
  readonly gateCounts: { readonly passing: number; readonly failing: number; readonly skipped: number } | null;
  /** The run's pull request, once Open Pull Request opened it (an https URL). */
  readonly pullRequest: { readonly url: string; readonly number: number } | null;
  /** Its CI as last recorded: `none` = no check or status 5 minutes after the push. */
  readonly ci: { readonly state: 'pending' | 'passed' | 'failed' | 'none' | 'timeout'; readonly url: string | null } | null;
}

export type HostMessage =
  | {
      readonly type: 'init';
      /** The session shown; the view names it in `loadOlder` and `find`, and drops answers about another. */
      readonly session: string;
      /** The newest entries only (docs/architecture.md, "Sessions"); older ones come in pages. */
      readonly entries: readonly TranscriptEntry[];
      /** Entries older than the first of `entries` exist. */
      readonly more: boolean;
      readonly busy: boolean;
      readonly provider: ProviderInfo;
      /** The chat header's line of the last gauge, if any. */
      readonly gauge?: GaugeHeadline;
      readonly trusted: boolean;
      readonly welcome: boolean;
      readonly sessionTitle: string;
    }
  | EntryMessage
  | OlderEntriesMessage
  | FoundMessage
  | DeltaMessage
  | ReplaceTextMessage
  | BusyMessage
  | GaugeMessage
  | { readonly type: 'provider'; readonly provider: ProviderInfo }
  | { readonly type: 'git'; readonly git: GitInfo }
  | { readonly type: 'drift'; readonly drift: DriftView }
  | { readonly type: 'rants'; readonly rants: readonly RantView[]; readonly runs: readonly RunView[] }
  | { readonly type: 'tools'; readonly tools: ToolsInfo }
  /** A command showed the view: the message box takes the focus. */
  | { readonly type: 'focus' }
  /** "Show Rants" after a rant was saved: the Rants list opens, and takes the focus. */
  | { readonly type: 'showRants' };

/** What the chat header says of the tools beyond the built-in ones. */
export interface ToolsInfo {
  /** null: run_command is offered; else the one line why not ("untrusted workspace", "no sandbox: …", "turned off"). */
  readonly commands: string | null;
  /** The MCP line ("MCP: 2 servers, 14 tools; 'github' failed"); null when MCP is off or no server is defined. */
  readonly mcp: string | null;
}

/** The page of entries just older than those the view has, answering `loadOlder`. */
export interface OlderEntriesMessage {
  readonly type: 'older';
  readonly session: string;
  /** The entry they come before: the oldest the view had when it asked. */
  readonly before: string;
  readonly entries: readonly TranscriptEntry[];
  /** Entries older than these exist. */
  readonly more: boolean;
}

/**
 * The answer to `find`: the entry found (none: no match), and the entries
 * between it and the oldest the view has, so that the view can show it.
 */
export interface FoundMessage {
  readonly type: 'found';
  readonly session: string;
  readonly query: string;
  readonly hit: string | null;
  /**
   * Which match the view lands on in `hit`, counted from the oldest (1-based)
   * over every match in the session, of `total` matches (not messages): the
   * last match of `hit` going older, its first going newer.
   */
  readonly ordinal: number;
  readonly total: number;
  /** Entries to put before the view's oldest, down to the hit; empty when the view has it already. */
  readonly older: readonly TranscriptEntry[];
  /** With `older`: entries older than these exist. */
  readonly more: boolean;
}

/** Commands the webview may ask the host to run: a fixed list, nothing else. */
export const WEBVIEW_COMMANDS = ['candor.selectModel', 'candor.setApiKey', 'candor.newSession', 'candor.openSession', 'candor.compact', 'candor.showDrift', 'candor.rant', 'candor.showLog', 'candor.evolve'] as const;
export type WebviewCommand = (typeof WEBVIEW_COMMANDS)[number];

export type WebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'send'; readonly text: string }
  | { readonly type: 'stop' }
  | { readonly type: 'retry' }
  | { readonly type: 'runCommand'; readonly command: WebviewCommand }
  | { readonly type: 'feedback'; readonly entryId: string; readonly value: 'up' | 'down' }
  | LoadOlderMessage
  | FindMessage
  | { readonly type: 'dismissRant'; readonly id: string }
  | { readonly type: 'takeBranch'; readonly branch: string }
  | { readonly type: 'showDiff'; readonly branch: string }
  | { readonly type: 'openPullRequest'; readonly branch: string }
  | ApprovalAnswer
  | ProposalAnswer;

/**
 * The user's answer to a call waiting in the chat. `run` is Run (a command)
 * or Allow (an MCP tool); `always` may carry the prefix the user edited;
 * `terminal` is Run in Terminal.
 */
export interface ApprovalAnswer {
  readonly type: 'approval';
  readonly id: string;
  readonly decision: 'run' | 'deny' | 'always' | 'terminal';
  readonly prefix?: string;
}

/** Accept or Reject of a pending proposal; `show` opens its diff in the editor. */
export interface ProposalAnswer {
  readonly type: 'proposal';
  readonly id: string;
  readonly decision: 'accept' | 'reject' | 'show';
}

/** The view scrolled up to its oldest entry: it asks for the page before it. */
export interface LoadOlderMessage {
  readonly type: 'loadOlder';
  readonly session: string;
  readonly before: string;
}

/** Find in chat: the next entry holding `query`, going `direction` from the entry `from` (from the newest when absent). */
export interface FindMessage {
  readonly type: 'find';
  readonly session: string;
  readonly query: string;
  readonly direction: 'older' | 'newer';
  readonly from?: string;
  /** The oldest entry the view has (absent: it has none). */
  readonly oldest?: string;
}

/** Longest id of a session or an entry the view may name (an entry id holds a tool call id the model chose). */
const MAX_ID_CHARS = 512;
/** Longest text find looks for. */
export const MAX_FIND_CHARS = 1000;

/** Longest command prefix Always Allow may remember. */
export const MAX_PREFIX_CHARS = 4096;

/** Longest message a user may send from the chat box (1 MiB of text). */
export const MAX_SEND_CHARS = 1_048_576;

/** What a message must meet beyond its shape: the core's rules, passed in by the host that parses. */
export interface WebviewMessageRules {
  /** Take Branch and Show Diff name only evolution branches: the core's one rule, `isHandoffBranchName`. */
  readonly isBranchName: (name: string) => boolean;
}

export function parseWebviewMessage(value: unknown, rules: WebviewMessageRules): WebviewMessage | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const only = (...keys: string[]): boolean => Object.keys(m).every((k) => k === 'type' || keys.includes(k));
  const id = (value: unknown): value is string => typeof value === 'string' && value !== '' && value.length <= MAX_ID_CHARS;
  switch (m.type) {
    case 'ready':
    case 'stop':
    case 'retry':
      return only() ? ({ type: m.type } as WebviewMessage) : undefined;
    case 'send':
      return only('text') && typeof m.text === 'string' && m.text.trim() !== '' && m.text.length <= MAX_SEND_CHARS ? { type: 'send', text: m.text } : undefined;
    case 'runCommand':
      return only('command') && typeof m.command === 'string' && (WEBVIEW_COMMANDS as readonly string[]).includes(m.command)
        ? { type: 'runCommand', command: m.command as WebviewCommand }
        : undefined;
    case 'feedback':
      return only('entryId', 'value') && typeof m.entryId === 'string' && m.entryId.length <= 200 && (m.value === 'up' || m.value === 'down')
        ? { type: 'feedback', entryId: m.entryId, value: m.value }
        : undefined;
    case 'loadOlder':
      return only('session', 'before') && id(m.session) && id(m.before) ? { type: 'loadOlder', session: m.session, before: m.before } : undefined;
    case 'find': {
      if (!only('session', 'query', 'direction', 'from', 'oldest') || !id(m.session)) return undefined;
      if (typeof m.query !== 'string' || m.query.trim() === '' || m.query.length > MAX_FIND_CHARS) return undefined;
      if (m.direction !== 'older' && m.direction !== 'newer') return undefined;
      if ((m.from !== undefined && !id(m.from)) || (m.oldest !== undefined && !id(m.oldest))) return undefined;
      return { type: 'find', session: m.session, query: m.query, direction: m.direction, ...(m.from === undefined ? {} : { from: m.from }), ...(m.oldest === undefined ? {} : { oldest: m.oldest }) };
    }
    case 'dismissRant':
      return only('id') && typeof m.id === 'string' && /^[0-9a-z-]{1,64}$/.test(m.id) ? { type: 'dismissRant', id: m.id } : undefined;
    case 'approval': {
      if (!only('id', 'decision', 'prefix') || !id(m.id)) return undefined;
      if (m.decision !== 'run' && m.decision !== 'deny' && m.decision !== 'always' && m.decision !== 'terminal') return undefined;
      if (m.prefix !== undefined && (m.decision !== 'always' || typeof m.prefix !== 'string' || m.prefix.trim() === '' || m.prefix.length > MAX_PREFIX_CHARS)) return undefined;
      return { type: 'approval', id: m.id, decision: m.decision, ...(typeof m.prefix === 'string' ? { prefix: m.prefix } : {}) };
    }
    case 'proposal':
      return only('id', 'decision') && id(m.id) && (m.decision === 'accept' || m.decision === 'reject' || m.decision === 'show') ? { type: 'proposal', id: m.id, decision: m.decision } : undefined;
    case 'takeBranch':
    case 'showDiff':
    case 'openPullRequest':
      return only('branch') && typeof m.branch === 'string' && rules.isBranchName(m.branch) ? { type: m.type, branch: m.branch } : undefined;
    default:
      return undefined;
  }
}
