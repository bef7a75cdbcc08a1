import type { ApprovalAnswer, ProposalAnswer, TranscriptEntry } from '../src/protocol/chat';
import { button, iconButton } from './toolkit';
import { renderApproval } from './approvalView';
import { renderProposal } from './proposalView';
import { renderMarkdown } from './markdown';
import { copyButton } from './clipboard';
import { icon } from './icons';
import { toolCallLabel } from './toolCallLabel';

/** What an entry's buttons do. */
export interface EntryActions {
  feedback(entryId: string, value: 'up' | 'down'): void;
  retry(): void;
  /** The user's answer to a command, an MCP call or a proposal waiting in the chat. */
  answer(message: ApprovalAnswer | ProposalAnswer): void;
}

/** Entries whose full form is rendered only once they come near the screen: markdown, and the buttons beside it. */
export function rendersLazily(entry: TranscriptEntry): boolean {
  return (entry.kind === 'assistant' && !entry.streaming) || entry.kind === 'partial';
}

/** A new element for `entry`, empty until `renderEntry` fills it. */
export function entryElement(entry: TranscriptEntry): HTMLElement {
  const el = document.createElement('div');
  el.className = `entry ${entry.kind}`;
  el.dataset.id = entry.id;
  el.setAttribute('role', 'article');
  if (entry.kind === 'assistant' && entry.streaming) {
    el.classList.add('streaming');
    el.setAttribute('aria-busy', 'true');
  }
  return el;
}

/** What an entry shows now: its text, and a reply's thinking (both grow while it streams). */
export interface Shown {
  readonly text: string;
  readonly reasoning: string;
}

/**
 * Fills `el` with `entry` shown with `shown`. `full: false` is the cheap form
 * of a lazily rendered entry: its text as plain text, about as tall as the
 * rendered form, until it comes near the screen.
 */
export function renderEntry(el: HTMLElement, entry: TranscriptEntry, shown: Shown, full: boolean, actions: EntryActions): void {
  el.replaceChildren();
  const { text } = shown;
  const who = document.createElement('div');
  who.className = 'who';
  const body = document.createElement('div');
  body.className = 'body';
  switch (entry.kind) {
    case 'user':
      who.textContent = 'You';
      body.textContent = text;
      break;
    case 'assistant':
    case 'partial':
      who.textContent = entry.kind === 'partial' ? 'Candor (incomplete reply)' : 'Candor';
      if (shown.reasoning) el.append(who, thinking(entry.id, shown.reasoning, entry.kind === 'assistant' && entry.streaming === true));
      if (!full) {
        body.classList.add('plain');
        body.textContent = text;
        break;
      }
      body.innerHTML = renderMarkdown(text);
      if (entry.kind === 'assistant' && !entry.streaming) {
        addCodeCopyButtons(body);
        el.append(...headOf(el, who), body, replyActions(entry.id, text, actions));
        return;
      }
      break;
    case 'summary':
      who.textContent = 'Compaction';
      body.textContent = text;
      break;
    case 'tool-call':
    case 'tool-result': {
      const details = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = entry.kind === 'tool-call'
        ? `${toolCallLabel(entry.name, entry.args)}${entry.cut ? ', cut at the output limit, not run' : ''}`
        : `Tool result: ${entry.name} (${entry.bytes.toLocaleString()} bytes)`;
      const pre = document.createElement('pre');
      pre.textContent = entry.kind === 'tool-call' ? entry.args : entry.text;
      details.append(summary, pre);
      el.append(details);
      return;
    }
    case 'notice': {
      el.classList.add(entry.level);
      el.setAttribute('role', entry.level === 'error' ? 'alert' : 'status');
      body.textContent = text;
      // The level is said by the icon and the border colour: the text itself stays in the foreground colour, legible in every theme.
      const mark = icon(entry.level);
      mark.classList.add('notice-icon');
      el.append(mark, body);
      if (entry.retryable) el.append(button('Retry', 'primary', () => actions.retry()));
      return;
    }
    case 'approval':
      renderApproval(el, entry, (message) => actions.answer(message));
      return;
    case 'proposal':
      renderProposal(el, entry, (message) => actions.answer(message));
      return;
  }
  el.append(...headOf(el, who), body);
}

/** The entry's `who` line, unless it is in place already (above a reply's thinking). */
function headOf(el: HTMLElement, who: HTMLElement): HTMLElement[] {
  return who.parentNode === el ? [] : [who];
}

/** Thinking the user opened, by entry: kept open through the re-renders of a stream and after it. */
const thinkingOpen = new Map<string, boolean>();

/**
 * A reply's thinking, above its answer: open while it streams (unless the
 * user closed it), folded once the reply is complete (unless the user opened
 * it). Plain text, never markdown: it is the model's scratch work.
 */
function thinking(id: string, text: string, streaming: boolean): HTMLElement {
  const details = document.createElement('details');
  details.className = 'thinking';
  details.open = thinkingOpen.get(id) ?? streaming;
  const summary = document.createElement('summary');
  summary.textContent = streaming ? 'Thinking…' : 'Thinking';
  const body = document.createElement('div');
  body.className = 'thought';
  body.textContent = text;
  details.append(summary, body);
  summary.addEventListener('click', () => thinkingOpen.set(id, !details.open));
  return details;
}

/** Under a reply: copy it (as the markdown it came as), and say whether it was good. */
function replyActions(entryId: string, text: string, actions: EntryActions): HTMLElement {
  const row = document.createElement('div');
  row.className = 'feedback';
  const send = (value: 'up' | 'down', chosen: HTMLElement): void => {
    actions.feedback(entryId, value);
    for (const b of [up, down]) b.setAttribute('aria-pressed', String(b === chosen));
  };
  const up: HTMLElement = iconButton('thumbsUp', 'Good reply', () => send('up', up));
  const down: HTMLElement = iconButton('thumbsDown', 'Bad reply', () => send('down', down));
  row.append(copyButton('Copy reply', () => text), up, down);
  return row;
}

/** A copy button on each code block of a rendered reply. */
function addCodeCopyButtons(body: HTMLElement): void {
  for (const pre of Array.from(body.querySelectorAll('pre'))) {
    const block = document.createElement('div');
    block.className = 'code-block';
    pre.replaceWith(block);
    block.append(pre, copyButton('Copy code', () => pre.textContent ?? ''));
  }
}

/** Marks each occurrence of `query` (any case) in the text of `el`; the marks, in reading order. */
export function markMatches(el: HTMLElement, query: string): HTMLElement[] {
  const needle = query.toLowerCase();
  const marks: HTMLElement[] = [];
  if (needle === '') return marks;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // Find looks in what an entry says, not in its labels and buttons (as the host's search does).
    if (!node.parentElement?.closest('.who, vscode-button, button, summary, label, .sr-only')) nodes.push(node as Text);
  }
  for (const node of nodes) {
    const text = node.data;
    const lower = text.toLowerCase();
    let at = lower.indexOf(needle);
    if (at === -1) continue;
    const parts = document.createDocumentFragment();
    let copied = 0;
    for (; at !== -1; at = lower.indexOf(needle, at + needle.length)) {
      parts.append(text.slice(copied, at));
      const mark = document.createElement('mark');
      mark.textContent = text.slice(at, at + needle.length);
      parts.append(mark);
      marks.push(mark);
      copied = at + needle.length;
    }
    parts.append(text.slice(copied));
    node.replaceWith(parts);
  }
  return marks;
}
