import { visibleParts, type VisibleOptions } from '../src/shared/visibleText';

/**
 * The pieces the entries that wait for the user share (a command, an MCP
 * call, a proposal): text with every hiding character made visible, folded
 * blocks, buttons named for what they answer, and the live note.
 */

/** A block longer than this many lines is folded (it scrolls within a few lines until unfolded). */
const FOLD_LINES = 20;
/** How long after a live note is put in the page its words are: a region's change is announced, its first content often not. */
const ANNOUNCE_MS = 150;

// The host sends an entry again whenever it changes, and each time it is
// drawn anew: what the user did to the one shown is kept here, by key.
/** Entries whose live note was spoken: once each. */
const announced = new Set<string>();
/** Folded blocks the user unfolded. */
const unfolded = new Set<string>();
let nextId = 0;

/** An id no other element of the page has, for aria references. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${++nextId}`;
}

/**
 * `text` as nodes, each hiding character a mark in a style of its own (its
 * code point in the tooltip). Without `keepLayout` a line feed shows as ␊
 * and still breaks the line, so a second line reads as one.
 */
export function visibleNodes(text: string, options: VisibleOptions = {}): Node[] {
  const nodes: Node[] = [];
  for (const part of visibleParts(text, options)) {
    if (part.kind === 'plain') {
      nodes.push(document.createTextNode(part.text));
      continue;
    }
    const mark = document.createElement('span');
    mark.className = part.kind === 'control' ? 'vt-control' : 'vt-hidden';
    mark.textContent = part.text;
    mark.title = `U+${(part.code ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    nodes.push(mark);
    if (part.code === 0x0a) nodes.push(document.createTextNode('\n'));
  }
  return nodes;
}

/**
 * A long block folded to a few lines that scroll, with a button to show
 * it all; `key` keeps it unfolded through a re-render.
 */
export function foldable(key: string, pre: HTMLElement, lines: number, what: string): HTMLElement {
  if (lines <= FOLD_LINES) return pre;
  const block = document.createElement('div');
  block.className = 'foldable';
  pre.id = uniqueId('fold');
  pre.tabIndex = 0;
  const toggle = actionButton('', '', 'secondary', `fold:${key}`, () => set(pre.classList.contains('folded')));
  toggle.classList.add('fold-toggle');
  toggle.setAttribute('aria-controls', pre.id);
  const set = (open: boolean): void => {
    pre.classList.toggle('folded', !open);
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = open ? 'Show less' : `Show all ${lines} lines`;
    toggle.setAttribute('aria-label', open ? `Show less of ${what}` : `Show all ${lines} lines of ${what}`);
    if (open) unfolded.add(key);
    else unfolded.delete(key);
  };
  set(unfolded.has(key));
  block.append(pre, toggle);
  return block;
}

export function lineCount(text: string): number {
  return text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
}

/**
 * A native button in the theme's colours: unlike the toolkit's, its
 * `aria-describedby` reaches an element of the page (the toolkit's button
 * sits in a shadow root). `key` lets a re-render give the focus back.
 */
export function actionButton(label: string, accessibleName: string, look: 'primary' | 'secondary', key: string, onClick: () => void): HTMLButtonElement {
  const el = document.createElement('button');
  el.type = 'button';
  el.className = `action ${look}`;
  el.textContent = label;
  el.dataset.keep = key;
  if (accessibleName !== '') {
    el.setAttribute('aria-label', accessibleName);
    el.title = accessibleName;
  }
  el.addEventListener('click', () => {
    if (el.getAttribute('aria-disabled') !== 'true') onClick();
  });
  return el;
}

export function actionRow(): HTMLElement {
  const row = document.createElement('div');
  row.className = 'entry-actions';
  return row;
}

/** Once answered, a row's buttons do nothing more until the host says what came of it. */
export function disable(row: HTMLElement, except: readonly HTMLElement[] = []): void {
  for (const button of Array.from(row.querySelectorAll('button'))) {
    if (!except.includes(button)) button.setAttribute('aria-disabled', 'true');
  }
}

/**
 * A note for screen readers that an entry waits for the user, spoken once
 * per entry (the focus stays where the user is).
 */
export function liveNote(id: string, text: string): HTMLElement {
  const note = document.createElement('div');
  note.className = 'sr-only';
  note.setAttribute('aria-live', 'polite');
  if (!announced.has(id)) {
    announced.add(id);
    setTimeout(() => (note.textContent = text), ANNOUNCE_MS);
  }
  return note;
}

export function who(text: string): HTMLElement {
  return line('who', text);
}

export function line(className: string, ...content: (string | Node)[]): HTMLElement {
  const el = document.createElement('div');
  el.className = className;
  el.append(...content);
  return el;
}

/** A name from the model (a folder, a server, a tool, a path) in code type, made visible. */
export function code(text: string): HTMLElement {
  const el = document.createElement('code');
  el.append(...visibleNodes(text));
  return el;
}
