import type { TranscriptEntry } from '../src/protocol/chat';
import { button } from './toolkit';
import { renderMarkdown } from './markdown';

/** What an entry's buttons do. */
export interface EntryActions {
  feedback(entryId: string, value: 'up' | 'down'): void;
  retry(): void;
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

/**
 * Fills `el` with `entry` shown with `text`. `full: false` is the cheap form
 * of a lazily rendered entry: its text as plain text, about as tall as the
 * rendered form, until it comes near the screen.
 */
export function renderEntry(el: HTMLElement, entry: TranscriptEntry, text: string, full: boolean, actions: EntryActions): void {
  el.replaceChildren();
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
      if (!full) {
        body.classList.add('plain');
        body.textContent = text;
        break;
      }
      body.innerHTML = renderMarkdown(text);
      if (entry.kind === 'assistant' && !entry.streaming) {
        el.append(who, body, feedbackButtons(entry.id, actions));
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
        ? `Tool call: ${entry.name} (${entry.args.length} chars)`
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
      el.append(body);
      if (entry.retryable) el.append(button('Retry', 'primary', () => actions.retry()));
      return;
    }
  }
  el.append(who, body);
}

function feedbackButtons(entryId: string, actions: EntryActions): HTMLElement {
  const row = document.createElement('div');
  row.className = 'feedback';
  const send = (value: 'up' | 'down', chosen: HTMLElement): void => {
    actions.feedback(entryId, value);
    row.querySelectorAll('vscode-button').forEach((b) => b.classList.remove('chosen'));
    chosen.classList.add('chosen');
  };
  const up: HTMLElement = button('▲', 'icon', () => send('up', up), 'Good reply');
  const down: HTMLElement = button('▼', 'icon', () => send('down', down), 'Bad reply');
  row.append(up, down);
  return row;
}

/** Marks each occurrence of `query` (any case) in the text of `el`. */
export function markMatches(el: HTMLElement, query: string): void {
  const needle = query.toLowerCase();
  if (needle === '') return;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
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
      copied = at + needle.length;
    }
    parts.append(text.slice(copied));
    node.replaceWith(parts);
  }
}
