import type { TranscriptEntry } from '../src/protocol/chat';
import { entryElement, markMatches, renderEntry, rendersLazily, type EntryActions } from './entryView';

/**
 * Entries per block. The transcript is a column of blocks, each skipped by
 * the browser's layout and paint while off screen (`content-visibility:
 * auto`), so a delta that grows the newest entry lays out one block, however
 * many entries are loaded above it.
 */
const BLOCK = 50;
/** Ask for older entries when the top is closer than this many screens. */
const LOAD_MARGIN_SCREENS = 1;
/** How near the bottom counts as following the newest entry, in pixels. */
const BOTTOM_SLACK = 32;
/** A scroll this soon after the user's wheel, key or pointer is the user's; any other moved the content (layout, anchoring). */
const USER_SCROLL_MS = 1000;

interface Item {
  entry: TranscriptEntry;
  el: HTMLElement;
  text: string;
  /** A reply's thinking as shown (it grows by deltas of its own while the reply streams). */
  reasoning: string;
  /** The full form is shown (markdown rendered). */
  full: boolean;
  block: HTMLElement;
}

export interface ListCallbacks extends EntryActions {
  /** The view came near its oldest entry and older ones exist. */
  loadOlder(before: string): void;
}

/**
 * The chat's transcript (docs/architecture.md, "Sessions"): the newest
 * entries first, older ones in pages as the user scrolls up. Markdown is
 * rendered when an entry's block first comes within a screen of the view;
 * a streamed delta re-renders only its own entry.
 */
export class TranscriptList {
  private readonly items = new Map<string, Item>();
  private readonly blocks: HTMLElement[] = [];
  private readonly renderedBlocks = new WeakSet<HTMLElement>();
  private readonly observer: IntersectionObserver;
  private more = false;
  private loading = false;
  /** The view follows the newest entry: until the user scrolls away from the bottom. */
  private stuck = true;
  private userInputAt = -Infinity;
  private pending = new Set<string>();
  private frame = 0;
  private found: HTMLElement | undefined;

  constructor(private readonly root: HTMLElement, private readonly callbacks: ListCallbacks) {
    this.observer = new IntersectionObserver((seen) => this.blocksSeen(seen), { root, rootMargin: '100% 0px' });
    root.addEventListener('scroll', () => this.scrolled(), { passive: true });
    for (const type of ['wheel', 'touchmove', 'keydown', 'pointerdown'] as const) {
      root.addEventListener(type, () => (this.userInputAt = performance.now()), { passive: true });
    }
  }

  get size(): number {
    return this.items.size;
  }

  oldestId(): string | undefined {
    const first = this.blocks[0]?.firstElementChild as HTMLElement | null | undefined;
    return first?.dataset.id;
  }

  /** A new transcript: `entries` are the newest; `more` says whether older ones exist. */
  reset(entries: readonly TranscriptEntry[], more: boolean): void {
    this.observer.disconnect();
    this.root.replaceChildren();
    this.items.clear();
    this.blocks.length = 0;
    this.pending.clear();
    this.found = undefined;
    this.more = more;
    this.loading = false;
    this.stuck = true;
    for (const entry of entries) this.add(entry, false);
    this.toBottom();
  }

  /** A live entry: new ones go at the bottom; one sent again under its id replaces it in place. */
  put(entry: TranscriptEntry): void {
    const item = this.items.get(entry.id);
    if (!item) {
      // A live entry arrives where the user is looking, usually: its full form at once.
      this.add(entry, true);
      this.afterChange();
      return;
    }
    const el = entryElement(entry);
    const text = 'text' in entry ? entry.text : '';
    const reasoning = reasoningOf(entry);
    const full = !rendersLazily(entry) || this.renderedBlocks.has(item.block);
    renderEntry(el, entry, { text, reasoning }, full, this.callbacks);
    const focus = focusIn(item.el);
    item.el.replaceWith(el);
    if (focus) giveFocusBack(el, focus);
    Object.assign(item, { entry, el, text, reasoning, full });
    this.afterChange();
  }

  /** Entries older than the oldest shown, keeping what is on screen where it is. */
  prepend(entries: readonly TranscriptEntry[], more: boolean): void {
    this.loading = false;
    const fresh = entries.filter((e) => !this.items.has(e.id));
    if (fresh.length > 0) {
      const fromBottom = this.root.scrollHeight - this.root.scrollTop;
      const blocks: HTMLElement[] = [];
      for (let i = 0; i < fresh.length; i += BLOCK) {
        const block = this.newBlock();
        for (const entry of fresh.slice(i, i + BLOCK)) this.fill(block, entry);
        blocks.push(block);
      }
      this.blocks[0]?.before(...blocks);
      if (this.blocks.length === 0) this.root.append(...blocks);
      this.blocks.unshift(...blocks);
      this.root.scrollTop = this.root.scrollHeight - fromBottom;
    }
    this.more = more;
    this.nearTop();
  }

  /** An older page that no longer fits (the view changed meanwhile): let a later scroll ask again. */
  dropPage(): void {
    this.loading = false;
  }

  delta(id: string, text: string, part: 'text' | 'reasoning' = 'text'): void {
    const item = this.items.get(id);
    if (!item) return;
    if (part === 'reasoning') item.reasoning += text;
    else item.text += text;
    this.schedule(id);
  }

  /** The host redacted text this entry already shows (a key split across deltas): its whole text (or thinking) again. */
  replaceText(id: string, text: string, part: 'text' | 'reasoning' = 'text'): void {
    const item = this.items.get(id);
    if (!item) return;
    if (part === 'reasoning') item.reasoning = text;
    else item.text = text;
    this.schedule(id);
  }

  /**
   * Marks `query` in the entry `id` and scrolls it into the middle of the
   * view; the marks, in reading order, or undefined when the view does not
   * have the entry.
   */
  reveal(id: string, query: string): HTMLElement[] | undefined {
    const item = this.items.get(id);
    if (!item) return undefined;
    this.renderBlock(item.block);
    if (this.found && this.found !== item.el) this.clearFound();
    else if (this.found === item.el) renderEntry(item.el, item.entry, item, item.full, this.callbacks);
    this.found = item.el;
    item.el.classList.add('found');
    const marks = markMatches(item.el, query);
    // A match inside a folded tool call or result: unfold it, so the match shows.
    for (const mark of marks) mark.closest('details')?.setAttribute('open', '');
    this.stuck = false;
    item.el.scrollIntoView({ block: 'center' });
    return marks;
  }

  /** Takes the mark off the entry last found. */
  clearFound(): void {
    if (!this.found) return;
    const id = this.found.dataset.id;
    this.found.classList.remove('found');
    this.found = undefined;
    const item = id === undefined ? undefined : this.items.get(id);
    // Re-rendering the entry removes the marks put into its text.
    if (item) renderEntry(item.el, item.entry, item, item.full, this.callbacks);
  }

  private add(entry: TranscriptEntry, full: boolean): void {
    let block = this.blocks[this.blocks.length - 1];
    if (!block || block.childElementCount >= BLOCK) {
      block = this.newBlock();
      this.root.append(block);
      this.blocks.push(block);
    }
    this.fill(block, entry, full);
  }

  private fill(block: HTMLElement, entry: TranscriptEntry, now = false): void {
    const el = entryElement(entry);
    const text = 'text' in entry ? entry.text : '';
    const reasoning = reasoningOf(entry);
    const full = now || !rendersLazily(entry) || this.renderedBlocks.has(block);
    renderEntry(el, entry, { text, reasoning }, full, this.callbacks);
    foldRetries(this.lastShown(block), entry);
    block.append(el);
    this.items.set(entry.id, { entry, el, text, reasoning, full, block });
  }

  /** The entry just before a new one in `block`: its last, or the last of the block before it. */
  private lastShown(block: HTMLElement): Element | null {
    if (block.lastElementChild) return block.lastElementChild;
    const at = this.blocks.indexOf(block);
    return at > 0 ? this.blocks[at - 1]?.lastElementChild ?? null : null;
  }

  private newBlock(): HTMLElement {
    const block = document.createElement('div');
    block.className = 'entry-block';
    this.observer.observe(block);
    return block;
  }

  private blocksSeen(seen: readonly IntersectionObserverEntry[]): void {
    let rendered = false;
    for (const entry of seen) {
      if (!entry.isIntersecting) continue;
      rendered = this.renderBlock(entry.target as HTMLElement) || rendered;
    }
    if (rendered) this.afterChange();
  }

  /** Renders the full form of every entry in `block`, once. */
  private renderBlock(block: HTMLElement): boolean {
    if (this.renderedBlocks.has(block)) return false;
    this.renderedBlocks.add(block);
    this.observer.unobserve(block);
    for (const child of Array.from(block.children)) {
      const id = (child as HTMLElement).dataset.id;
      const item = id === undefined ? undefined : this.items.get(id);
      if (!item || item.full) continue;
      item.full = true;
      renderEntry(item.el, item.entry, item, true, this.callbacks);
    }
    return true;
  }

  /** Re-renders the entry `id` at the next frame (and follows the bottom if the view does). */
  private schedule(id: string | undefined): void {
    if (id !== undefined) this.pending.add(id);
    if (this.frame === 0) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** One render per frame for each streaming entry that grew, and nothing else. */
  private flush(): void {
    this.frame = 0;
    const ids = this.pending;
    this.pending = new Set();
    for (const id of ids) {
      const item = this.items.get(id);
      if (item) renderEntry(item.el, item.entry, item, true, this.callbacks);
    }
    this.afterChange();
  }

  private afterChange(): void {
    if (this.stuck) this.toBottom();
  }

  private toBottom(): void {
    this.root.scrollTop = this.root.scrollHeight;
    this.stuck = true;
    this.nearTop();
  }

  private scrolled(): void {
    const { scrollTop, scrollHeight, clientHeight } = this.root;
    if (scrollTop + clientHeight >= scrollHeight - BOTTOM_SLACK) this.stuck = true;
    else if (performance.now() - this.userInputAt < USER_SCROLL_MS) this.stuck = false;
    // Not the user: entries above took their real height. Still following: back to the bottom.
    else if (this.stuck) this.schedule(undefined);
    this.nearTop();
  }

  /** Older entries are asked for while the top is near: scrolling up, or a first page shorter than the view. */
  private nearTop(): void {
    if (!this.more || this.loading) return;
    if (this.root.scrollTop > this.root.clientHeight * LOAD_MARGIN_SCREENS) return;
    const oldest = this.oldestId();
    if (oldest === undefined) return;
    this.loading = true;
    this.callbacks.loadOlder(oldest);
  }
}

function reasoningOf(entry: TranscriptEntry): string {
  return (entry.kind === 'assistant' || entry.kind === 'partial') && entry.reasoning ? entry.reasoning : '';
}

interface KeptFocus {
  readonly key: string | undefined;
  readonly selection: readonly [number, number] | undefined;
}

/** Where the focus is inside `el`, if it is: what a new rendering of the same entry can find again (its `data-keep`). */
function focusIn(el: HTMLElement): KeptFocus | undefined {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !el.contains(active)) return undefined;
  const key = active.closest<HTMLElement>('[data-keep]')?.dataset.keep;
  const selection = active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement ? ([active.selectionStart ?? 0, active.selectionEnd ?? 0] as const) : undefined;
  return { key, selection };
}

/**
 * An entry sent again (a call decided, its output grown) is drawn anew; the
 * focus inside it goes to the same control in the new one, or, when that
 * control is gone (the buttons of an answered call), to the entry itself,
 * so that Tab goes on from where the user was and not from the top.
 */
function giveFocusBack(el: HTMLElement, focus: KeptFocus): void {
  const same = focus.key === undefined ? null : Array.from(el.querySelectorAll<HTMLElement>('[data-keep]')).find((e) => e.dataset.keep === focus.key && !e.closest('[hidden]'));
  const target = same ?? el;
  if (target === el && !el.hasAttribute('tabindex')) el.tabIndex = -1;
  target.focus({ preventScroll: true });
  if (focus.selection && (target instanceof HTMLTextAreaElement || target instanceof HTMLInputElement)) target.setSelectionRange(...focus.selection);
}

/** The notice the chat shows before it retries a request: "… Retrying (1 of 2) in 0.5 s…". */
const RETRY_NOTICE = /Retrying \(\d+ of \d+\) in [\d.]+ s…$/;

/**
 * One box for one failure: a retry notice is folded away when the next
 * notice of the same request follows it at once (the next retry, or the
 * error that ends the retries), so a connection failure shows one box, not
 * three near-identical ones. A retry that succeeded keeps its notice.
 */
function foldRetries(previous: Element | null, entry: TranscriptEntry): void {
  if (entry.kind !== 'notice' || !(previous instanceof HTMLElement)) return;
  if (!previous.classList.contains('notice') || !previous.classList.contains('info')) return;
  if (!RETRY_NOTICE.test(previous.querySelector('.body')?.textContent ?? '')) return;
  previous.hidden = true;
}
