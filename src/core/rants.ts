import * as path from 'node:path';
import { appendJsonLine, readJsonLines } from './jsonl';
import { newId } from './ids';
import { KindError } from './kindError';

/** One line of rants.jsonl (docs/architecture.md, "Data files"). */
export interface Rant {
  readonly v: 1;
  readonly id: string;
  readonly ts: string;
  readonly text: string;
  readonly project: string;
  readonly session: string | null;
}

export const RANTS_FILE = 'rants.jsonl';

export class EmptyRantError extends KindError<'empty-rant'> {
  override readonly name = 'EmptyRantError';
  constructor() {
    super('empty-rant', 'A rant needs some text.');
  }
}

/** Nothing is filtered at capture: the text is kept exactly as typed (only an empty one is refused). */
export function saveRant(dataDir: string, input: { text: string; project: string; session: string | null }, clock: () => Date = () => new Date()): Rant {
  if (input.text.trim() === '') throw new EmptyRantError();
  // The id and `ts` from the same reading of the clock: two rants in one millisecond still sort by id as saved.
  const at = clock();
  const rant: Rant = { v: 1, id: newId(at.getTime()), ts: at.toISOString(), text: input.text, project: input.project, session: input.session };
  appendJsonLine(path.join(dataDir, RANTS_FILE), rant);
  return rant;
}

export function readRants(dataDir: string): { rants: Rant[]; skipped: number } {
  const { records, skipped } = readJsonLines<Rant>(path.join(dataDir, RANTS_FILE));
  const rants = records.filter((r) => r.v === 1 && typeof r.id === 'string' && typeof r.text === 'string');
  return { rants, skipped: skipped.length + records.length - rants.length };
}
