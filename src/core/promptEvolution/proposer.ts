import { createHash } from 'node:crypto';
import type { TextModel } from '../provider/chatModel';
import { clip, extractJson, isRecord } from '../text';
import { errorMessage } from '../errorMessage';

/**
 * The proposer: a model reads what went wrong and proposes candidate prompts.
 * It only proposes; the gate decides. Anything it returns that is not a
 * usable candidate is dropped and counted, never repaired.
 */

export interface Evidence {
  /** Recent requests that went wrong, as text (the user's message and the reply). */
  readonly failingTraces?: readonly string[];
  /** Replies the user voted down. */
  readonly downVoted?: readonly string[];
  /** Rants linked to sessions. */
  readonly rants?: readonly string[];
}

export interface ProposeInput {
  readonly model: TextModel;
  readonly current: string;
  readonly evidence: Evidence;
  /** How many candidates to ask for (and keep at most). */
  readonly count: number;
  /** Told to the model so it aims under the gate's edit budget. */
  readonly maxChangedLines: number;
  readonly signal?: AbortSignal;
}

export interface Candidate {
  /** `c-` and the first 12 hex digits of the sha256 of the text (LF line endings): the same text is the same candidate across runs. */
  readonly id: string;
  readonly text: string;
  readonly rationale?: string;
}

export type ProposalResult =
  | { readonly kind: 'ok'; readonly candidates: readonly Candidate[]; readonly dropped: number }
  | { readonly kind: 'none'; readonly reason: 'unparseable' | 'no-usable-candidate' | 'model-error' | 'cancelled'; readonly detail: string };

const PER_ITEM_CHARS = 2_000;
const ITEMS_PER_KIND = 12;

export const PROPOSER_SYSTEM = [
  'You improve the system prompt of a coding assistant. You propose small edits; a deterministic test decides whether any is kept.',
  'Rules: keep every block between <!-- frozen --> and <!-- /frozen --> exactly as it is, byte for byte and in the same order;',
  'change as few lines as you can; each candidate must be the complete new prompt.',
  'Reply with a JSON array only: [{"prompt": "<the complete new prompt>", "rationale": "<one sentence>"}].',
].join(' ');

export async function proposeCandidates(input: ProposeInput): Promise<ProposalResult> {
  let reply: string;
  try {
    reply = await input.model.complete(
      [
        { role: 'system', content: PROPOSER_SYSTEM },
        { role: 'user', content: proposalRequest(input) },
      ],
      input.signal,
    );
  } catch (err) {
    if (input.signal?.aborted) return { kind: 'none', reason: 'cancelled', detail: 'cancelled' };
    return { kind: 'none', reason: 'model-error', detail: errorMessage(err) };
  }
  return parseProposals(reply, input.current, input.count);
}

function proposalRequest(input: ProposeInput): string {
  const section = (title: string, items: readonly string[] | undefined): string => {
    const kept = (items ?? []).slice(-ITEMS_PER_KIND).map((item, i) => `${i + 1}. ${clip(item, PER_ITEM_CHARS)}`);
    return `## ${title}\n${kept.length > 0 ? kept.join('\n') : '(none)'}`;
  };
  return [
    `Propose ${input.count} candidate prompts, each changing at most ${input.maxChangedLines} lines of the current prompt.`,
    `## Current prompt\n${input.current}`,
    section('Requests that went wrong', input.evidence.failingTraces),
    section('Replies the user voted down', input.evidence.downVoted),
    section('Rants', input.evidence.rants),
  ].join('\n\n');
}

/** Parses the proposer's reply: a JSON list of prompts (strings or {prompt, rationale}). */
export function parseProposals(reply: string, current: string, count: number): ProposalResult {
  const list = extractJson(reply, 'array');
  if (!Array.isArray(list)) return { kind: 'none', reason: 'unparseable', detail: `no JSON list in the reply: ${clip(reply, 80)}` };
  const seen = new Set<string>([candidateId(current)]);
  const candidates: Candidate[] = [];
  let dropped = 0;
  for (const item of list) {
    const text = typeof item === 'string' ? item : isRecord(item) && typeof item.prompt === 'string' ? item.prompt : undefined;
    const id = text === undefined ? undefined : candidateId(text);
    if (text === undefined || id === undefined || text.trim() === '' || seen.has(id) || candidates.length >= count) {
      dropped++;
      continue;
    }
    seen.add(id);
    const rationale = isRecord(item) && typeof item.rationale === 'string' ? item.rationale : undefined;
    candidates.push(rationale === undefined ? { id, text } : { id, text, rationale });
  }
  if (candidates.length === 0) return { kind: 'none', reason: 'no-usable-candidate', detail: `${list.length} item(s), none a new prompt` };
  return { kind: 'ok', candidates, dropped };
}

export function candidateId(text: string): string {
  return `c-${createHash('sha256').update(text.replace(/\r\n/g, '\n')).digest('hex').slice(0, 12)}`;
}
