import type { ChatMessage } from '../messages';

/**
 * A session is a JSON-lines file, `<dataDir>/sessions/<id>.jsonl`, appended
 * record by record so a crash or a second window never loses what was written.
 * Every record carries `v: 1` and an ISO `ts`.
 */

export interface MetaRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'meta';
  readonly id: string;
  readonly title?: string;
  readonly project?: string;
}

/** A message in the history sent to the model. */
export interface MessageRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'message';
  readonly id: string;
  readonly turn: string;
  readonly message: ChatMessage;
  /** A reply's thinking, kept to be shown (the message carries it only to a server that takes it back). */
  readonly reasoning?: string;
  /** A reply cut at the output limit: what the chat says of it. */
  readonly cut?: string;
  /** The calls of a cut reply as they came (the message holds them with `{}` as arguments), to be shown. */
  readonly cutCalls?: readonly CutCall[];
}

export interface CutCall {
  readonly id: string;
  readonly arguments: string;
}

/** A reply that failed part-way: shown in the transcript, never sent again. */
export interface PartialRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'partial';
  readonly id: string;
  readonly turn: string;
  readonly text: string;
  /** The thinking that had arrived. */
  readonly reasoning?: string;
}

/** Something the user should see in the transcript: an error, a retry, a warning. */
export interface NoticeRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'notice';
  readonly id: string;
  readonly turn?: string;
  readonly level: 'info' | 'warning' | 'error';
  readonly text: string;
  /** Set on the error of a turn that can be sent again. */
  readonly retryable?: boolean;
}

/** The older messages listed were replaced by `summary`. */
export interface CompactionRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'compaction';
  readonly id: string;
  readonly replaces: readonly string[];
  readonly summary: ChatMessage;
}

/** The context gate's state after a request, so a reload keeps the anchor. */
export interface GateRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'gate';
  readonly state: unknown;
}

/** What a tool call asks the user before it runs (docs/architecture.md, "Approvals"). */
export type ApprovalAsk =
  | {
      readonly kind: 'command';
      /** The shell line exactly as the model gave it. */
      readonly command: string;
      /** Where it runs, as the user reads it (`app`, `app/packages/web`). */
      readonly folder: string;
      readonly network: boolean;
      /** Why Run in Terminal cannot type it (a control character); null when it can. */
      readonly noTerminal: string | null;
    }
  | {
      readonly kind: 'mcp';
      readonly server: string;
      readonly tool: string;
      /** The arguments as formatted JSON (bounded, redacted). */
      readonly args: string;
    };

export type ApprovalDecision = 'pending' | 'allowed' | 'denied' | 'terminal' | 'stopped';

/**
 * A tool call that waits for the user: a command, an MCP tool. Written again
 * under the same id as it is decided, runs and ends; the newest record wins.
 */
export interface ApprovalRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'approval';
  readonly id: string;
  readonly turn: string;
  readonly ask: ApprovalAsk;
  readonly decision: ApprovalDecision;
  /** What allowed it without a click (`Always Allow "npm test"`, a setting's prefix, a read-only tool). */
  readonly auto?: string;
  /** Its output (bounded, redacted): as it streams, then in full. */
  readonly output?: string;
  /** One line once it ended: `exit 0 in 1.2 s`, `timed out after 120 s`. */
  readonly outcome?: string;
}

export type ProposalState = 'pending' | 'accepted' | 'rejected' | 'stale' | 'superseded';

/**
 * An edit the agent proposed (docs/architecture.md, "Proposals"). It stays
 * pending while the turn goes on and after it, a reload included, until the
 * user accepts or rejects it; the newest record under its id wins.
 */
export interface ProposalRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'proposal';
  readonly id: string;
  readonly turn: string;
  /** The file, absolute. */
  readonly file: string;
  /** The same, as the user reads it (relative to its workspace folder). */
  readonly path: string;
  /** sha256 of the text it was made against (the buffer, else the file; '' for a new file). */
  readonly base: string;
  readonly created: boolean;
  /** The whole text the file would have. */
  readonly content: string;
  /** A unified diff for the chat (bounded). */
  readonly diff: string;
  readonly state: ProposalState;
}

export type SessionRecord = MetaRecord | MessageRecord | PartialRecord | NoticeRecord | CompactionRecord | GateRecord | ApprovalRecord | ProposalRecord;

const TYPES = new Set(['meta', 'message', 'partial', 'notice', 'compaction', 'gate', 'approval', 'proposal']);

export function isSessionRecord(value: unknown): value is SessionRecord {
  if (value === null || typeof value !== 'object') return false;
  const record = value as { v?: unknown; type?: unknown; id?: unknown };
  return record.v === 1 && typeof record.type === 'string' && TYPES.has(record.type);
}
