import { clip } from '../text';
import { visibleText } from '../../shared/visibleText';

/** The local gate's result, as the run's record keeps it (GateSummary fits). */
export interface PullRequestGate {
  readonly passed: boolean;
  /** The tail of the last step's output. */
  readonly tail: string;
  readonly ms?: number;
  readonly flaky?: boolean;
  readonly passing?: number;
  readonly failing?: number;
  readonly skipped?: number;
}

export interface PullRequestTextInput {
  /** The change summary: its first line is the title. */
  readonly summary: string;
  readonly rantText: string;
  readonly gate: PullRequestGate | null;
  readonly diffstat: string | null;
  /** The rant the change addresses: `Candor-Rant: <id>` ends the body. Null for a change that addresses none (a revert). */
  readonly rantId: string | null;
  /** More trailer lines (`Candor-Revert: <sha>`), after the rant's. */
  readonly trailers?: readonly string[];
}

export const TITLE_MAX = 72;
const SUMMARY_MAX = 4000;
const RANT_MAX = 4000;
const TAIL_MAX = 4000;
const DIFFSTAT_MAX = 4000;

/**
 * The pull request's title and body: the change summary, the rant, the
 * local gate's result and tail, the diffstat, the trailers. Each part is redacted before it is
 * clipped (half a secret matches nothing) and the whole once more after.
 * The trailer block is the body's last paragraph, so that a squash merge
 * that takes the description as its message keeps `Candor-Rant:`; the
 * rant is quoted, and so is any other line that reads like a Candor
 * trailer or a revert note: the rollback trusts those lines wherever they
 * are in a message, and only Candor may write them. Every part Candor did
 * not write (the model's summary, the rant, the gate's tail, file names) is
 * shown with its control characters as marks (docs/architecture.md, "Text
 * bound for a person"), the title as one line.
 */
export function pullRequestText(input: PullRequestTextInput, redact: (text: string) => string): { readonly title: string; readonly body: string } {
  const title = quoteMarkers(redact(clip(visibleText(firstLine(redact(input.summary)) || firstLine(redact(input.rantText)) || 'Candor change'), TITLE_MAX)));
  const summary = quoteMarkers(clip(shown(redact(input.summary.trim())), SUMMARY_MAX));
  const sections = [
    ...(summary !== '' ? [`## The change\n\n${summary}`] : []),
    `## The rant\n\n${quote(clip(shown(redact(input.rantText.trim())), RANT_MAX))}`,
    `## The local gate\n\n${gateText(input.gate, redact)}`,
  ];
  if (input.diffstat !== null && input.diffstat.trim() !== '') sections.push(`## Diffstat\n\n${fenced(quoteMarkers(clip(shown(redact(input.diffstat.trimEnd())), DIFFSTAT_MAX)))}`);
  const trailers = [...(input.rantId !== null ? [`Candor-Rant: ${input.rantId}`] : []), ...(input.trailers ?? [])].map((line) => oneLine(redact(line)));
  if (trailers.length > 0) sections.push(trailers.join('\n'));
  return { title, body: redact(sections.join('\n\n')) };
}

function gateText(gate: PullRequestGate | null, redact: (text: string) => string): string {
  if (gate === null) return 'No local gate ran; this pull request\'s CI is the gate.';
  const counts = [gate.passing !== undefined ? `${gate.passing} passing` : '', gate.failing !== undefined ? `${gate.failing} failing` : '', gate.skipped !== undefined ? `${gate.skipped} skipped` : '']
    .filter((part) => part !== '')
    .join(', ');
  const verdict = gate.flaky ? 'Flaky: failed, then passed on the same tree' : gate.passed ? 'Passed' : 'Failed';
  const time = gate.ms !== undefined ? ` in ${Math.round(gate.ms / 100) / 10} s` : '';
  const line = `${verdict}${time}${counts ? ` (${counts})` : ''}, in Candor's sandbox.`;
  const tail = quoteMarkers(clip(shown(redact(gate.tail.trimEnd())), TAIL_MAX));
  return tail === '' ? line : `${line}\n\n${fenced(tail)}`;
}

/** Text Candor did not write, its control characters shown as marks, its lines kept. */
function shown(text: string): string {
  return visibleText(text, { keepLayout: true });
}

function firstLine(text: string): string {
  return text.split('\n').find((line) => line.trim() !== '')?.trim() ?? '';
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`.trimEnd())
    .join('\n');
}

/** A fenced block longer than any run of backticks inside, so that the text cannot close it. */
function fenced(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}

/** Lines that read like a Candor trailer or a revert note, quoted (as the commit message does, see ship.ts). */
function quoteMarkers(text: string): string {
  return text
    .split('\n')
    .map((line) => (/^\s*(candor-[a-z-]+\s*:|this reverts commit)/i.test(line) ? `> ${line}` : line))
    .join('\n');
}
