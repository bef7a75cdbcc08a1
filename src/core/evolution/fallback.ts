import type { Classification } from './classify';
import { oneLine } from '../text';
import { tokens } from './similarity';

/**
 * The rule fallback of triage, for rants the model did not classify (or when
 * there is no model). It may say `user-project`, `confusion` or `unclear`
 * (duplicates are found before it), never `agent-code` or
 * `agent-behaviour`: a rule cannot tell a complaint about the agent from one
 * about the user's code, and a wrong guess there would become a change.
 * Undefined: the rules cannot place it, and the rant stays unclassified.
 */
export function classifyByRules(text: string, readme?: string): Classification | undefined {
  const note = oneLine(text, 300);
  const words = text.trim().split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  if (words.length < 3) return { class: 'unclear', note, source: 'fallback' };
  if (OWN_CODE.test(text) && !NAMES_AGENT.test(text)) return { class: 'user-project', note, source: 'fallback' };
  if (QUESTION.test(text) && readme !== undefined) {
    const answer = readmeAnswer(text, readme);
    if (answer !== undefined) return { class: 'confusion', note, answer, source: 'fallback' };
  }
  return undefined;
}

/** "my code", "our tests", "my project"…: the user speaks of what is theirs. */
const OWN_CODE = /\b(my|our)\s+(own\s+)?(code|codebase|project|app|application|repo|repository|tests?|functions?|class(es)?|modules?|services?|build|program|scripts?|components?|api|database|schema)\b/i;
/** Words that point at the agent: then the rant may be about it, and the rules do not decide. */
const NAMES_AGENT = /\b(candor|agent|extension|assistant|chat|gauge|rant|evolution|you|your|it told|it said)\b/i;
const QUESTION = /\?|\b(what|why|how|where|which|when)\b|\b(confus\w*|unclear|understand|misleading|no idea)\b/i;

const STOP_WORDS = new Set([
  'a', 'an', 'the', 'and', 'or', 'but', 'of', 'to', 'in', 'on', 'at', 'for', 'with', 'by', 'from', 'is', 'are', 'was', 'were', 'be', 'been',
  'it', 'its', 'this', 'that', 'these', 'those', 'i', 'me', 'my', 'we', 'our', 'you', 'your', 'what', 'why', 'how', 'where', 'which', 'when',
  'do', 'does', 'did', 'not', 'no', 'so', 'if', 'then', 'can', 'could', 'should', 'would', 'will', 'there', 'here', 'as', 'all', 'any', 'some',
  'has', 'have', 'had', 'just', 'only', 'than', 'too', 'very', 'mean', 'means', 'get', 'got', 'one', 'up', 'out', 'about', 'into', 'also',
]);

/**
 * The README section (heading and first paragraph) that shares the most
 * content words with the rant, at least two: what the user can read to
 * clear up the confusion. Undefined when no section is close enough.
 */
export function readmeAnswer(text: string, readme: string): string | undefined {
  const asked = contentWords(text);
  let best: { heading: string; paragraph: string; score: number } | undefined;
  for (const section of readmeSections(readme)) {
    const words = contentWords(`${section.heading} ${section.paragraph}`);
    let score = 0;
    for (const word of asked) if (words.has(word)) score++;
    if (score >= 2 && (best === undefined || score > best.score)) best = { ...section, score };
  }
  if (best === undefined) return undefined;
  return oneLine(`From the README${best.heading !== '' ? ` ("${best.heading}")` : ''}: ${best.paragraph}`, 800);
}

function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of tokens(text)) if (word.length > 2 && !STOP_WORDS.has(word)) out.add(word.replace(/s$/, ''));
  return out;
}

/** Paragraphs of the README with the heading they fall under; list items count as paragraphs of their own. */
function readmeSections(readme: string): Array<{ heading: string; paragraph: string }> {
  const out: Array<{ heading: string; paragraph: string }> = [];
  let heading = '';
  let lines: string[] = [];
  const flush = (): void => {
    const paragraph = lines.join(' ').trim();
    if (paragraph !== '' && !paragraph.startsWith('```') && !paragraph.startsWith('|')) out.push({ heading, paragraph });
    lines = [];
  };
  for (const raw of readme.split(/\r?\n/)) {
    const line = raw.trim();
    const title = /^#{1,6}\s+(.*)$/.exec(line);
    if (title !== null) {
      flush();
      heading = title[1]?.trim() ?? '';
    } else if (line === '' || /^[-*]\s/.test(line)) {
      flush();
      if (line !== '') lines.push(line.replace(/^[-*]\s+/, ''));
    } else {
      lines.push(line);
    }
  }
  flush();
  return out;
}
