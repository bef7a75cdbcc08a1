import { contentText } from '../messages';
import type { Session } from '../session/session';

/** What the chat shows. Built from the session's records on load, and streamed as deltas while a turn runs. */
export type TranscriptEntry =
  | { readonly id: string; readonly kind: 'user'; readonly text: string }
  | { readonly id: string; readonly kind: 'assistant'; readonly text: string; readonly streaming?: boolean }
  | { readonly id: string; readonly kind: 'partial'; readonly text: string }
  | { readonly id: string; readonly kind: 'tool-call'; readonly name: string; readonly args: string }
  | { readonly id: string; readonly kind: 'tool-result'; readonly name: string; readonly text: string; readonly bytes: number }
  | { readonly id: string; readonly kind: 'notice'; readonly level: 'info' | 'warning' | 'error'; readonly text: string; readonly retryable?: boolean }
  | { readonly id: string; readonly kind: 'summary'; readonly text: string };

/** Tool results longer than this are cut in the transcript (the model got them whole). */
const TRANSCRIPT_TOOL_CHARS = 4000;

export function transcriptOf(session: Session): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  const toolNames = new Map<string, string>();
  for (const record of session.all()) {
    switch (record.type) {
      case 'message': {
        const m = record.message;
        if (m.role === 'user') entries.push({ id: record.id, kind: 'user', text: contentText(m) });
        else if (m.role === 'assistant') {
          const text = contentText(m);
          if (text) entries.push({ id: record.id, kind: 'assistant', text });
          for (const call of m.tool_calls ?? []) {
            if (call.type !== 'function') continue;
            toolNames.set(call.id, call.function.name);
            entries.push({ id: `${record.id}:${call.id}`, kind: 'tool-call', name: call.function.name, args: call.function.arguments });
          }
        } else if (m.role === 'tool') {
          const text = contentText(m);
          entries.push({ id: record.id, kind: 'tool-result', name: toolNames.get(m.tool_call_id) ?? 'tool', text: clip(text), bytes: Buffer.byteLength(text) });
        }
        break;
      }
      case 'partial':
        entries.push({ id: record.id, kind: 'partial', text: record.text });
        break;
      case 'notice':
        entries.push({ id: record.id, kind: 'notice', level: record.level, text: record.text, retryable: record.retryable });
        break;
      case 'compaction':
        entries.push({ id: record.id, kind: 'summary', text: `Compacted ${record.replaces.length} earlier messages into a summary.` });
        break;
      default:
        break;
    }
  }
  // Only the newest error can still be retried.
  const retryTurn = session.retryableTurn();
  return entries.map((e, i) => (e.kind === 'notice' && e.retryable && (!retryTurn || i !== lastRetryable(entries)) ? { ...e, retryable: false } : e));
}

function lastRetryable(entries: TranscriptEntry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e?.kind === 'notice' && e.retryable) return i;
  }
  return -1;
}

export function clip(text: string, max = TRANSCRIPT_TOOL_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[truncated in the chat: ${text.length.toLocaleString('en-US')} characters]`;
}
