import { assertNever } from '../assertNever';
import { contentText, type ToolCall } from '../messages';
import type { ApprovalAsk, ApprovalDecision, ProposalState, SessionRecord } from './records';

export type { ApprovalAsk, ApprovalDecision, ProposalState };

/**
 * What the chat shows. Built from the session's records by one mapping,
 * `Transcript`, both on load and live (the session's `TranscriptPages`);
 * while a reply streams, its entry grows by deltas until its record
 * replaces it.
 */
export type TranscriptEntry =
  | { readonly id: string; readonly kind: 'user'; readonly text: string }
  | { readonly id: string; readonly kind: 'assistant'; readonly text: string; readonly reasoning?: string; readonly streaming?: boolean }
  | { readonly id: string; readonly kind: 'partial'; readonly text: string; readonly reasoning?: string }
  /** `cut`: the reply was cut at the output limit, so the call was not run (its arguments as they came). */
  | { readonly id: string; readonly kind: 'tool-call'; readonly name: string; readonly args: string; readonly cut?: true }
  | { readonly id: string; readonly kind: 'tool-result'; readonly name: string; readonly text: string; readonly bytes: number }
  | { readonly id: string; readonly kind: 'notice'; readonly level: 'info' | 'warning' | 'error'; readonly text: string; readonly retryable?: true }
  | { readonly id: string; readonly kind: 'summary'; readonly text: string }
  | ApprovalEntry
  | ProposalEntry;

/** A command or an MCP call waiting for Run/Allow, Deny, Always Allow (and Run in Terminal), then its output. */
export interface ApprovalEntry {
  readonly id: string;
  readonly kind: 'approval';
  readonly ask: ApprovalAsk;
  readonly decision: ApprovalDecision;
  readonly auto?: string;
  readonly output?: string;
  readonly outcome?: string;
}

/** A proposed edit with its diff, and Accept / Reject while it is pending. */
export interface ProposalEntry {
  readonly id: string;
  readonly kind: 'proposal';
  readonly path: string;
  readonly diff: string;
  readonly created: boolean;
  readonly state: ProposalState;
}

type NoticeEntry = Extract<TranscriptEntry, { kind: 'notice' }>;

/** Tool results longer than this are cut in the transcript (the model got them whole). */
const TRANSCRIPT_TOOL_CHARS = 4000;

/**
 * The one mapping from session records to transcript entries (docs/architecture.md,
 * "One message, end to end"). Records go in one at a time, in file order;
 * each `add` returns the entries to show: new ones, and earlier ones that
 * changed (an entry sent again under its id replaces the one shown). The
 * transcript after a reload is this mapping run over the file, so what a
 * reload shows is what was shown live.
 */
export class Transcript {
  private readonly shown: TranscriptEntry[] = [];
  private readonly positions = new Map<string, number>();
  private readonly toolNames = new Map<string, string>();
  /** The notice whose Retry still works: the newest retryable error, while nothing but bookkeeping came after it. */
  private retryable: NoticeEntry | undefined;

  add(record: SessionRecord): TranscriptEntry[] {
    // Gate snapshots and partial replies do not end a failed turn's chance to be retried (Session.retryableTurn).
    const changed = record.type === 'gate' || record.type === 'partial' ? [] : this.endRetry();
    return [...changed, ...this.entriesOf(record).map((entry) => this.put(entry))];
  }

  entries(): TranscriptEntry[] {
    return [...this.shown];
  }

  /** The live list, not a copy: read it, do not keep it across adds. */
  get list(): readonly TranscriptEntry[] {
    return this.shown;
  }

  indexOf(id: string): number | undefined {
    return this.positions.get(id);
  }

  private entriesOf(record: SessionRecord): TranscriptEntry[] {
    switch (record.type) {
      case 'message': {
        const m = record.message;
        if (m.role === 'user') return [{ id: record.id, kind: 'user', text: contentText(m) }];
        if (m.role === 'assistant') return this.replyEntries(record, contentText(m), m.tool_calls ?? []);
        if (m.role === 'tool') {
          const text = contentText(m);
          return [{ id: record.id, kind: 'tool-result', name: this.toolNames.get(m.tool_call_id) ?? 'tool', text: truncateForChat(text), bytes: Buffer.byteLength(text) }];
        }
        return [];
      }
      case 'partial':
        return [{ id: record.id, kind: 'partial', text: record.text, ...(record.reasoning ? { reasoning: record.reasoning } : {}) }];
      case 'notice': {
        const notice: NoticeEntry = { id: record.id, kind: 'notice', level: record.level, text: record.text };
        if (!record.retryable || !record.turn) return [notice];
        this.retryable = { ...notice, retryable: true };
        return [this.retryable];
      }
      case 'compaction':
        return [{ id: record.id, kind: 'summary', text: `Compacted ${record.replaces.length} earlier messages into a summary.` }];
      case 'approval': {
        const { id, ask, decision, auto, output, outcome } = record;
        return [{ id, kind: 'approval', ask, decision, ...(auto !== undefined ? { auto } : {}), ...(output !== undefined ? { output } : {}), ...(outcome !== undefined ? { outcome } : {}) }];
      }
      case 'proposal':
        return [{ id: record.id, kind: 'proposal', path: record.path, diff: record.diff, created: record.created, state: record.state }];
      case 'meta':
      case 'gate':
        return [];
      default:
        return assertNever(record, 'session record');
    }
  }

  /** A reply: its thinking and text, its calls (as they came when it was cut), and the line that says it was cut. */
  private replyEntries(record: Extract<SessionRecord, { type: 'message' }>, text: string, calls: readonly ToolCall[]): TranscriptEntry[] {
    const reasoning = typeof record.reasoning === 'string' && record.reasoning !== '' ? record.reasoning : undefined;
    const entries: TranscriptEntry[] = text || reasoning ? [{ id: record.id, kind: 'assistant', text, ...(reasoning ? { reasoning } : {}) }] : [];
    const cutArgs = new Map((Array.isArray(record.cutCalls) ? record.cutCalls : []).map((c) => [c.id, c.arguments]));
    for (const call of calls) {
      this.toolNames.set(call.id, call.function.name);
      const cut = record.cut !== undefined ? { cut: true as const } : {};
      entries.push({ id: `${record.id}:${call.id}`, kind: 'tool-call', name: call.function.name, args: cutArgs.get(call.id) ?? call.function.arguments, ...cut });
    }
    if (typeof record.cut === 'string') entries.push({ id: `${record.id}:cut`, kind: 'notice', level: 'warning', text: record.cut });
    return entries;
  }

  /** Only the newest error can still be retried, and only until something else happens. */
  private endRetry(): TranscriptEntry[] {
    const shown = this.retryable;
    if (!shown) return [];
    this.retryable = undefined;
    const { retryable: _retryable, ...plain } = shown;
    return [this.put(plain)];
  }

  private put(entry: TranscriptEntry): TranscriptEntry {
    const at = this.positions.get(entry.id);
    if (at === undefined) {
      this.positions.set(entry.id, this.shown.length);
      this.shown.push(entry);
    } else this.shown[at] = entry;
    return entry;
  }
}

/**
 * A tool result as the chat shows it: the first `max` characters, then a line
 * saying the whole result's length. Unlike `clip` of `text.ts` (one line that
 * ends in "…"), the reader learns how much the chat left out.
 */
function truncateForChat(text: string, max = TRANSCRIPT_TOOL_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[truncated in the chat: ${text.length.toLocaleString('en-US')} characters]`;
}
