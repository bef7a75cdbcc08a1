import type { GaugeHeadline, GaugeState } from '../context/gauge';
import type { TranscriptEntry } from '../session/transcript';

/**
 * The messages of the chat view that the core makes, declared once: the chat
 * loop's events (`ChatEvent`), the view's redaction (`StreamMessage`) and the
 * protocol's `HostMessage` are built from them.
 */

/** An entry to show; one under an id already shown replaces it. */
export interface EntryMessage {
  readonly type: 'entry';
  readonly entry: TranscriptEntry;
}

/** Which part of a streaming reply a delta grows: the answer, or the thinking shown above it. */
export type ReplyPart = 'text' | 'reasoning';

/** More text of a streaming entry (of its answer when `part` is absent). */
export interface DeltaMessage {
  readonly type: 'delta';
  readonly id: string;
  readonly text: string;
  readonly part?: ReplyPart;
}

/**
 * The whole text of a streaming entry, in place of what its deltas built so
 * far: sent when redacting the accumulated reply changed text the view
 * already shows (docs/architecture.md, "Secrets").
 */
export interface ReplaceTextMessage {
  readonly type: 'replaceText';
  readonly id: string;
  readonly text: string;
  readonly part?: ReplyPart;
}

export interface BusyMessage {
  readonly type: 'busy';
  readonly busy: boolean;
  /** What the request is waiting for, while nothing of the reply shows ("processing the prompt: 40%"). */
  readonly status?: string;
}

export interface GaugeMessage {
  readonly type: 'gauge';
  readonly gauge: GaugeState;
  /** What the chat's header says of it. */
  readonly headline: GaugeHeadline;
}
