import * as crypto from 'node:crypto';
import { createTwoFilesPatch } from 'diff';
import { newId } from '../ids';
import type { ProposalRecord, ProposalState, SessionRecord } from '../session/records';
import type { Session } from '../session/session';

/** An edit as the model gives it: one exact passage replaced, or the whole content. */
export interface EditRequest {
  readonly oldText?: string;
  readonly newText?: string;
  readonly content?: string;
}

/** Longest diff the chat entry carries; the editor's diff shows the whole. */
const MAX_DIFF_CHARS = 20_000;

export function textHash(text: string): string {
  return crypto.createHash('sha256').update(text).digest('hex');
}

/** The file's next text, or why the edit cannot be made against `current`. */
export function applyEditRequest(current: string, edit: EditRequest, display: string): { readonly next: string } | { readonly refused: string } {
  if (edit.content !== undefined) return { next: edit.content };
  const oldText = edit.oldText ?? '';
  const at = current.indexOf(oldText);
  if (oldText === '' || at < 0) return { refused: `old_text was not found in ${display}. Read the file again.` };
  if (current.indexOf(oldText, at + 1) >= 0) return { refused: `old_text occurs more than once in ${display}; give a longer passage.` };
  return { next: current.slice(0, at) + (edit.newText ?? '') + current.slice(at + oldText.length) };
}

export function proposalDiff(display: string, before: string, after: string, created: boolean): string {
  const patch = createTwoFilesPatch(created ? '/dev/null' : `a/${display}`, `b/${display}`, before, after, undefined, undefined, { context: 3 });
  const body = patch.split('\n').slice(patch.startsWith('===') ? 1 : 0).join('\n');
  return body.length <= MAX_DIFF_CHARS ? body : `${body.slice(0, MAX_DIFF_CHARS)}\n[… diff cut in the chat: ${body.length.toLocaleString('en-US')} characters; Show Diff opens it whole]`;
}

/** The newest record of each proposal in the session. */
export function latestProposals(records: readonly SessionRecord[]): Map<string, ProposalRecord> {
  const latest = new Map<string, ProposalRecord>();
  for (const record of records) if (record.type === 'proposal') latest.set(record.id, record);
  return latest;
}

/** The proposals still pending in the session, oldest first. */
export function pendingProposals(records: readonly SessionRecord[]): ProposalRecord[] {
  return [...latestProposals(records).values()].filter((p) => p.state === 'pending');
}

/** The pending proposal for `file`, if any: a new one is made on top of it and takes its place. */
export function pendingFor(records: readonly SessionRecord[], file: string): ProposalRecord | undefined {
  return pendingProposals(records).find((p) => p.file === file);
}

export interface NewProposal {
  readonly turn: string;
  readonly file: string;
  readonly path: string;
  /** The text it is made against, as the user has it (the buffer, else the file; '' for a new file). */
  readonly base: string;
  readonly created: boolean;
  /** The text the edit applies to: the base, or a pending proposal's content it builds on. */
  readonly from: string;
  readonly content: string;
}

/**
 * Writes a proposal, pending (docs/architecture.md, "Proposals"). A pending
 * proposal for the same file is superseded: the new one holds both edits,
 * made against the same base.
 */
export function addProposal(session: Session, p: NewProposal): ProposalRecord {
  const earlier = pendingFor(session.all(), p.file);
  if (earlier) setProposalState(session, earlier, 'superseded');
  return session.append({
    type: 'proposal',
    id: newId(),
    turn: p.turn,
    file: p.file,
    path: p.path,
    base: p.created ? '' : textHash(p.base),
    created: p.created,
    content: p.content,
    diff: proposalDiff(p.path, p.created ? '' : p.base, p.content, p.created),
    state: 'pending',
  }) as ProposalRecord;
}

export function setProposalState(session: Session, proposal: ProposalRecord, state: ProposalState): ProposalRecord {
  const { v: _v, ts: _ts, ...draft } = proposal;
  return session.append({ ...draft, state }) as ProposalRecord;
}

/** Whether the text the user has now is still the one the proposal was made against. */
export function isBaseUnchanged(proposal: ProposalRecord, current: string | undefined): boolean {
  if (proposal.created) return current === undefined || current === '';
  return current !== undefined && textHash(current) === proposal.base;
}
