import type { ChatMessage } from '../messages';
import type { TextModel } from '../provider/chatModel';
import type { Rant } from '../rants';

export type RantClass = 'bug' | 'confusion' | 'request' | 'noise';
export const RANT_CLASSES: readonly RantClass[] = ['bug', 'confusion', 'request', 'noise'];

export interface Classification {
  readonly class: RantClass;
  /** One line on what the rant is about, for the change phase. */
  readonly note: string;
  readonly source: 'model' | 'fallback';
}

/** Rants per model request, and characters of each rant shown. */
const BATCH = 40;
const MAX_RANT_CHARS = 2000;

export const TRIAGE_SYSTEM_PROMPT = [
  'You triage complaints ("rants") that a developer wrote about a software project while using it.',
  'Classify each rant as exactly one of:',
  '- "bug": something is broken or behaves wrongly;',
  '- "confusion": the user did not understand something (docs, messages, naming);',
  '- "request": the user asks for something new or different;',
  '- "noise": venting with nothing to act on.',
  'Answer with strict JSON only, no prose and no code fence:',
  '{"rants":[{"id":"<rant id>","class":"bug|confusion|request|noise","note":"<one line: what to change>"}]}',
].join('\n');

/**
 * Asks the model to classify the rants (one request per 40), with the
 * keyword rules for every rant the model did not answer properly: no reply,
 * an error, text that is not the JSON asked for, an unknown id or class.
 */
export async function classifyRants(rants: readonly Rant[], model: TextModel | undefined, signal?: AbortSignal): Promise<Map<string, Classification>> {
  const result = new Map<string, Classification>();
  for (let start = 0; start < rants.length; start += BATCH) {
    const batch = rants.slice(start, start + BATCH);
    const answered = model === undefined ? new Map<string, Classification>() : await askModel(batch, model, signal);
    for (const rant of batch) result.set(rant.id, answered.get(rant.id) ?? classifyByRules(rant.text));
  }
  return result;
}

async function askModel(rants: readonly Rant[], model: TextModel, signal?: AbortSignal): Promise<Map<string, Classification>> {
  const listing = rants.map((rant) => JSON.stringify({ id: rant.id, text: rant.text.slice(0, MAX_RANT_CHARS) })).join('\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: TRIAGE_SYSTEM_PROMPT },
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

/** The model's answer as classifications; anything malformed is left out (and falls back). */
export function parseTriageReply(reply: string, ids: ReadonlySet<string>): Map<string, Classification> {
  const found = new Map<string, Classification>();
  const json = extractJson(reply);
  const list = Array.isArray(json) ? json : isRecord(json) && Array.isArray(json.rants) ? json.rants : [];
  for (const entry of list) {
    if (!isRecord(entry)) continue;
    const id = entry.id;
    const cls = typeof entry.class === 'string' ? entry.class.trim().toLowerCase() : '';
    if (typeof id !== 'string' || !ids.has(id) || !(RANT_CLASSES as readonly string[]).includes(cls)) continue;
    const note = typeof entry.note === 'string' ? entry.note.replace(/\s+/g, ' ').trim().slice(0, 300) : '';
    found.set(id, { class: cls as RantClass, note, source: 'model' });
  }
  return found;
}

/** The first JSON value in a reply, tolerating a code fence or prose around it. */
function extractJson(reply: string): unknown {
  const text = reply.replace(/```(?:json)?/gi, '').trim();
  for (const open of ['{', '[']) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(open === '{' ? '}' : ']');
    if (start === -1 || end <= start) continue;
    try {
      return JSON.parse(text.slice(start, end + 1));
    } catch {
      // try the other bracket
    }
  }
  return undefined;
}

const RULES: ReadonlyArray<readonly [RantClass, RegExp]> = [
  ['bug', /\b(bugs?|crash\w*|errors?|exceptions?|broken|breaks?|fail\w*|wrong|stack ?trace|hangs?|hung|freez\w*|stuck|regression|doesn'?t work|does not work|not working|won'?t|can'?t|cannot|lost|loses|losing|undefined|NaN)\b/i],
  ['confusion', /(\?|\b(confus\w*|unclear|understand|no idea|what does|what is|why does|why is|how do|how to|where is|where are|misleading|cryptic|huh)\b)/i],
  ['request', /\b(please|would be nice|should|could|wish|want|add|support|feature|option|allow|let me|make it)\b/i],
];

/** The deterministic fallback: keyword rules, first match wins; nothing matched (or fewer than 3 words) is noise. */
export function classifyByRules(text: string): Classification {
  const words = text.trim().split(/\s+/).filter((w) => w !== '');
  const note = text.replace(/\s+/g, ' ').trim().slice(0, 300);
  if (words.length >= 3) {
    for (const [cls, pattern] of RULES) if (pattern.test(text)) return { class: cls, note, source: 'fallback' };
  }
  return { class: 'noise', note, source: 'fallback' };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
