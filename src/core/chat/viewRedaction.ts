import { MATCH_REACH, type SecretSet } from '../redact';
import type { TranscriptEntry } from '../session/transcript';
import type { DeltaMessage, EntryMessage, ReplaceTextMessage, ReplyPart } from './viewMessages';

/**
 * Everything posted to the chat view passes through here (docs/architecture.md,
 * "Secrets"). Most messages are redacted whole. A streamed reply is redacted
 * on its accumulated text, never delta by delta, so a key split across two
 * deltas is still caught: the raw text stays here, the whole is redacted, and
 * only the new part of the redacted text is posted. When redaction changes
 * text the view already has, the entry's text is replaced instead. The
 * stream ends when its record's entry (the whole reply, or the partial one)
 * comes under the same id, redacted whole. A reply's thinking is a stream of
 * its own beside its text, redacted the same way.
 */

/** The stream messages rewritten here; `replaceText` is the only one the redaction adds. */
export type StreamMessage = EntryMessage | DeltaMessage | ReplaceTextMessage;

/**
 * A credential that may still be growing at the end of the text. It is held
 * back until the next character shows where it ends, so that the view never
 * gets half of one (the pattern alone would not match the half).
 */
const OPEN_CREDENTIAL = /(?:\bsk-[A-Za-z0-9_-]*|\bBearer[ \t]*[A-Za-z0-9._~+/=:-]*|\b(?:(?:proxy-)?authorization|x-api-key|(?:openai[-_])?api[-_]?key)["']?[ \t]*[:=]?[ \t]*["']?[^\s"',;}]*)$/i;
/** The last word of a line is held while it grows (a key is one word); a longer one is shown, and the replace covers it. */
const MAX_HELD_WORD = 256;
/** Only the end of the growing line can be held back. */
const HOLD_WINDOW = 1024;
/**
 * A line growing past this is finished up to a blank where cutting changes
 * no redaction (at least the last KEEP_TAIL characters stay open, enough to
 * decide any match across the cut), so each delta costs the same however
 * long the line gets.
 */
const MAX_TAIL = 2048;
const KEEP_TAIL = 512;

interface Stream {
  /** Redacted text of the part that is finished (whole lines, or a long line up to a safe blank): it never changes. */
  done: string;
  /** Raw text still growing. */
  tail: string;
  /** How much of `done` the view has, and what it has after that. */
  shownDone: number;
  shownTail: string;
}

/** The streams of one entry: its text under its id, its thinking beside it. */
function streamKey(id: string, part: ReplyPart): string {
  return part === 'reasoning' ? `${id}\u0000reasoning` : id;
}

export class ViewRedaction {
  private readonly streams = new Map<string, Stream>();

  constructor(private readonly secrets: SecretSet) {}

  /** The messages to post in place of `message`: none or one. */
  messages<M extends { readonly type: string }>(message: M): Array<M | StreamMessage> {
    const stream = message as unknown as StreamMessage;
    switch (stream.type) {
      case 'entry':
        return [this.entry(stream.entry)];
      case 'delta':
        return this.delta(stream.id, stream.text, stream.part ?? 'text');
      default:
        // A full refresh replaces the view's entries: a stream still running has no entry there any more.
        if (message.type === 'init') this.streams.clear();
        return [this.secrets.redactDeep(message)];
    }
  }

  private entry(entry: TranscriptEntry): StreamMessage {
    // The record's entry under a streaming id (the whole reply, or a partial one) ends that stream.
    this.streams.delete(streamKey(entry.id, 'text'));
    this.streams.delete(streamKey(entry.id, 'reasoning'));
    if (entry.kind !== 'assistant' || !entry.streaming) return { type: 'entry', entry: this.secrets.redactDeep(entry) };
    const text = this.start(entry.id, 'text', entry.text);
    const reasoning = this.start(entry.id, 'reasoning', entry.reasoning ?? '');
    return { type: 'entry', entry: { ...entry, text, ...(entry.reasoning !== undefined ? { reasoning } : {}) } };
  }

  /** A new stream of one part of a streaming entry; what the view may show of its first text. */
  private start(id: string, part: ReplyPart, text: string): string {
    const stream: Stream = { done: '', tail: '', shownDone: 0, shownTail: '' };
    this.streams.set(streamKey(id, part), stream);
    this.append(stream, text);
    stream.shownDone = stream.done.length;
    stream.shownTail = this.visibleTail(stream);
    return stream.done + stream.shownTail;
  }

  private delta(id: string, text: string, part: ReplyPart): StreamMessage[] {
    const stream = this.streams.get(streamKey(id, part));
    // A delta of no known stream has no entry in the view to go to: it is not sent (alone, it could hold half a key).
    if (!stream) return [];
    this.append(stream, text);
    return this.update(id, part, stream, this.visibleTail(stream));
  }

  /** The view has `done[0, shownDone) + shownTail`; it should have `done + tail`. Only the new part is compared. */
  private update(id: string, part: ReplyPart, stream: Stream, tail: string): StreamMessage[] {
    const now = stream.done.slice(stream.shownDone) + tail;
    const before = stream.shownTail;
    stream.shownDone = stream.done.length;
    stream.shownTail = tail;
    const which = part === 'reasoning' ? { part } : {};
    if (now === before) return [];
    if (now.startsWith(before)) return [{ type: 'delta', id, text: now.slice(before.length), ...which }];
    return [{ type: 'replaceText', id, text: stream.done + tail, ...which }];
  }

  private append(stream: Stream, text: string): void {
    stream.tail += text;
    const end = stream.tail.lastIndexOf('\n');
    if (end !== -1) this.finishUpTo(stream, end + 1);
    if (stream.tail.length > MAX_TAIL) this.finishLongLine(stream);
  }

  private finishUpTo(stream: Stream, cut: number): void {
    stream.done += this.secrets.redact(stream.tail.slice(0, cut));
    stream.tail = stream.tail.slice(cut);
  }

  /**
   * Finishes a long line after a single space, where redacting the two sides
   * apart gives what redacting them together gives: no match spans the cut
   * (a match starts at most MATCH_REACH, or a secret's length, before it).
   */
  private finishLongLine(stream: Stream): void {
    const tail = stream.tail;
    const reach = MATCH_REACH + Math.max(0, ...this.secrets.values().map((s) => s.length));
    let tries = 0;
    for (let space = tail.lastIndexOf(' ', tail.length - Math.max(KEEP_TAIL, reach)); space > 0 && tries < 16; space = tail.lastIndexOf(' ', space - 1), tries++) {
      const cut = space + 1;
      if (/\s/.test(tail[space - 1] ?? ' ') || /\s/.test(tail[cut] ?? ' ')) continue;
      const before = tail.slice(Math.max(0, cut - reach), cut);
      const after = tail.slice(cut, cut + reach);
      if (this.secrets.redact(before) + this.secrets.redact(after) !== this.secrets.redact(before + after)) continue;
      this.finishUpTo(stream, cut);
      return;
    }
  }

  /** The growing line as the view may show it: redacted, with what may be the start of a secret held back. */
  private visibleTail(stream: Stream): string {
    return this.secrets.redact(stream.tail.slice(0, stream.tail.length - this.heldLength(stream.tail)));
  }

  /** How much of the growing line's end may be the start of a secret. */
  private heldLength(line: string): number {
    const tail = line.slice(-HOLD_WINDOW);
    let held = 0;
    const word = /\S+$/.exec(tail)?.[0];
    if (word && word.length <= MAX_HELD_WORD) held = word.length;
    const open = OPEN_CREDENTIAL.exec(tail);
    if (open) held = Math.max(held, tail.length - open.index);
    for (const secret of this.secrets.values()) {
      for (let k = Math.min(secret.length - 1, tail.length); k > held; k--) {
        if (tail.endsWith(secret.slice(0, k))) {
          held = k;
          break;
        }
      }
    }
    return held;
  }
}
