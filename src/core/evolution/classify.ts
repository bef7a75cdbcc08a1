import type { ChatMessage } from '../messages';
import type { TextModel } from '../provider/chatModel';
import type { Rant } from '../rants';
import { MAX_README_CHARS } from './readme';
import { extractJson, isRecord, oneLine } from '../text';

/**
 * What a rant is about (docs/architecture.md, "Evolution"): only
 * `agent-code` can become a code change, and only in the agent's own
 * repository; `agent-behaviour` feeds prompt evolution; the rest are
 * recorded and shown, never acted on.
 */
export type RantClass = 'agent-code' | 'agent-behaviour' | 'user-project' | 'confusion' | 'duplicate' | 'unclear';
export const RANT_CLASSES: readonly RantClass[] = ['agent-code', 'agent-behaviour', 'user-project', 'confusion', 'duplicate', 'unclear'];

/** The classes the model may give; duplicates are found by comparing texts. */
const MODEL_CLASSES: readonly RantClass[] = ['agent-code', 'agent-behaviour', 'user-project', 'confusion', 'unclear'];

export interface Classification {
  readonly class: RantClass;
  /** One line on what the rant is about, for the change phase. */
  readonly note: string;
  /** `confusion` only: the short explanation shown with the rant. */
  readonly answer?: string;
  readonly source: 'model' | 'fallback';
}

/** Rants per model request, characters of each rant shown, of an answer kept. */
const BATCH = 40;
const MAX_RANT_CHARS = 2000;
const MAX_ANSWER_CHARS = 800;

export const TRIAGE_SYSTEM_PROMPT = [
  'You triage complaints ("rants") that a user wrote about an AI coding agent while using it in one of their own projects.',
  'The agent may improve itself; it must never change the user\'s project because of a rant. Classify each rant as exactly one of:',
  '- "agent-code": a defect or missing feature in the agent\'s own code (its commands, views, tools, status bar, git handling, settings);',
  '- "agent-behaviour": how the agent answers or acts (too long, wrong tone, ignores instructions, poor suggestions); its prompt is the fix, not its code;',
  '- "user-project": about the user\'s own code or project, not about the agent;',
  '- "confusion": the user misunderstood what the agent does; give "answer", a short explanation (at most three sentences) based on the agent\'s README below;',
  '- "unclear": venting, or too vague to act on.',
  'When unsure between "agent-code" and "user-project", choose "user-project".',
  'Answer with strict JSON only, no prose and no code fence:',
  '{"rants":[{"id":"<rant id>","class":"agent-code|agent-behaviour|user-project|confusion|unclear","note":"<one line: what it is about>","answer":"<confusion only>"}]}',
].join('\n');

/** The system prompt with the agent's README as context (clipped), or without one. */
export function triageSystemPrompt(readme: string | undefined): string {
  const text = readme?.trim() ?? '';
  if (text === '') return `${TRIAGE_SYSTEM_PROMPT}\n(The agent's README is not available.)`;
  const clipped = text.length > MAX_README_CHARS ? `${text.slice(0, MAX_README_CHARS)}\n…` : text;
  return `${TRIAGE_SYSTEM_PROMPT}\nThe agent's README, for context:\n<<<README\n${clipped}\nREADME>>>`;
}

/**
 * Asks the model to classify the rants (one request per 40). A rant the
 * model did not answer properly (no reply, an error, text that is not the
 * JSON asked for, an unknown id or class, a `confusion` without an answer)
 * is left out of the result: the caller keeps it unclassified and asks again
 * on the next run. Never a guess that could become a change.
 */
export async function classifyWithModel(rants: readonly Rant[], model: TextModel, readme: string | undefined, signal?: AbortSignal): Promise<Map<string, Classification>> {
  const result = new Map<string, Classification>();
  for (let start = 0; start < rants.length; start += BATCH) {
    const answered = await askModel(rants.slice(start, start + BATCH), model, readme, signal);
    for (const [id, c] of answered) result.set(id, c);
  }
  return result;
}

async function askModel(rants: readonly Rant[], model: TextModel, readme: string | undefined, signal?: AbortSignal): Promise<Map<string, Classification>> {
  const listing = rants.map((rant) => JSON.stringify({ id: rant.id, text: rant.text.slice(0, MAX_RANT_CHARS) })).join('\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: triageSystemPrompt(readme) },
    { role: 'user', content: `Triage these rants (one JSON object per line):\n${listing}` },
  ];
  let reply: string;
  try {
    reply = await model.complete(messages, signal);
  } catch {
    if (signal?.aborted === true) throw signal.reason ?? new Error('cancelled');
    return new Map();
  }
  return parseTriageReply(reply, new Set(rants.map((r) => r.id)));
}

/** The model's answer as classifications; anything malformed is left out (and stays unclassified). */
export function parseTriageReply(reply: string, ids: ReadonlySet<string>): Map<string, Classification> {
  const found = new Map<string, Classification>();
  const wrapped = extractJson(reply, 'object');
  const list = isRecord(wrapped) && Array.isArray(wrapped.rants) ? wrapped.rants : ((extractJson(reply, 'array') as unknown[] | undefined) ?? []);
  for (const entry of list) {
    if (!isRecord(entry)) continue;
    const id = entry.id;
    const cls = typeof entry.class === 'string' ? entry.class.trim().toLowerCase().replace(/_/g, '-') : '';
    if (typeof id !== 'string' || !ids.has(id) || found.has(id) || !(MODEL_CLASSES as readonly string[]).includes(cls)) continue;
    const note = typeof entry.note === 'string' ? oneLine(entry.note, 300) : '';
    if (cls === 'confusion') {
      const answer = typeof entry.answer === 'string' ? oneLine(entry.answer, MAX_ANSWER_CHARS) : '';
      if (answer === '') continue;
      found.set(id, { class: 'confusion', note, answer, source: 'model' });
    } else {
      found.set(id, { class: cls as RantClass, note, source: 'model' });
    }
  }
  return found;
}
