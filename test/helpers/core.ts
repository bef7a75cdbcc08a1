// Test doubles and oracles: small compositions of production code that only
// tests and benchmarks need, kept out of src so that every export there is
// used by the product.
import type { Session } from '../../src/core/session/session';
import { Transcript, type TranscriptEntry } from '../../src/core/session/transcript';
import type { DriftEvent, DriftRecord, DriftSink } from '../../src/core/context/driftEvents';
import { Tally, type DriftTally } from '../../src/core/context/tally';
import { measureParts, type MessageMeasure } from '../../src/core/context/heuristic';
import { messageParts } from '../../src/core/context/messageParts';
import type { ChatMessage } from '../../src/core/messages';
import type { Logger } from '../../src/core/log';
import { DUPLICATE_THRESHOLD, jaccard, tokens } from '../../src/core/evolution/similarity';
import type { Trailer } from '../../src/core/git/parse';
import type { ReplaceTextMessage } from '../../src/protocol/chat';

/** The transcript of a whole session, through the one production mapping. */
export function transcriptOf(session: Session): TranscriptEntry[] {
  const transcript = new Transcript();
  for (const record of session.all()) transcript.add(record);
  return transcript.entries();
}

/** A drift sink that keeps the events in memory. */
export class MemoryDriftSink implements DriftSink {
  readonly events: DriftEvent[] = [];
  record(event: DriftEvent): void {
    this.events.push(event);
  }
}

/** The totals of a whole list of drift records, folded by the production Tally. */
export function tallyDrift(records: readonly DriftRecord[]): DriftTally {
  const tally = new Tally();
  for (const record of records) tally.add(record);
  return tally.result();
}

/** Collects log lines. */
export class MemoryLogger implements Logger {
  readonly lines: string[] = [];
  constructor(private readonly echo?: (line: string) => void) {}
  trace(message: string): void { this.push('trace', message); }
  info(message: string): void { this.push('info', message); }
  warn(message: string): void { this.push('warn', message); }
  error(message: string): void { this.push('error', message); }
  private push(level: string, message: string): void {
    const line = `[${level}] ${message}`;
    this.lines.push(line);
    this.echo?.(line);
  }
}

/** A float in [0, 1) from a 32-bit generator, for simulations. */
export function uniform(next: () => number): () => number {
  return () => next() / 0x1_0000_0000;
}

/** The heuristic's measure of one message. */
export function measureMessage(message: ChatMessage): MessageMeasure {
  return measureParts(messageParts(message));
}

/** Whether two rants' texts are near-duplicates, as triage judges them. */
export function isDuplicateText(a: string, b: string, threshold = DUPLICATE_THRESHOLD): boolean {
  return jaccard(tokens(a), tokens(b)) >= threshold;
}

/** The rant ids of `Candor-Rant:` trailers. */
export function candorRantIds(trailers: readonly Trailer[]): string[] {
  return trailers.filter((t) => t.key.toLowerCase() === 'candor-rant').map((t) => t.value);
}

export function isReplaceTextMessage(value: unknown): value is ReplaceTextMessage {
  if (value === null || typeof value !== 'object') return false;
  const m = value as Record<string, unknown>;
  return m.type === 'replaceText' && typeof m.id === 'string' && typeof m.text === 'string';
}
