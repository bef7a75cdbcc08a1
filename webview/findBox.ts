import type { FoundMessage } from '../src/protocol/chat';
import { iconButton } from './toolkit';

/** Waits this long after the last keystroke before searching. */
const TYPING_PAUSE_MS = 250;

export interface FindCallbacks {
  /** Ask the host for the next match going `direction` from `from` (from the newest when absent). */
  find(query: string, direction: 'older' | 'newer', from: string | undefined): void;
  /** Show the entry found, with `query` marked in it: the marks, or undefined when the view does not have it. */
  reveal(id: string, query: string): HTMLElement[] | undefined;
  /** The find box closed: take the marks off. */
  closed(): void;
}

/**
 * Find in chat (Ctrl+F): a box of the chat's own, since the browser's find
 * sees only the entries loaded. The host searches the whole session and
 * counts every match, not every message; its answer brings the entries down
 * to the message of the match, and the view scrolls to it
 * (docs/architecture.md, "Sessions"). Between the matches of one message
 * the box steps by itself. Enter finds the next older match, Shift+Enter
 * the next newer one, Escape closes the box.
 */
export class FindBox {
  private readonly box: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly status: HTMLElement;
  /** The message of the current match. */
  private current: string | undefined;
  /** The marks of the current message, the current one, and its number among all matches. */
  private marks: HTMLElement[] = [];
  private markIndex = -1;
  private ordinal = 0;
  private total = 0;
  /** Which way the question the host answers next went. */
  private asked: 'older' | 'newer' = 'older';
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(before: HTMLElement, private readonly callbacks: FindCallbacks) {
    this.box = document.createElement('div');
    this.box.id = 'find';
    this.box.setAttribute('role', 'search');
    this.box.hidden = true;
    this.input = document.createElement('input');
    this.input.type = 'text';
    this.input.setAttribute('aria-label', 'Find in chat');
    this.input.placeholder = 'Find in chat';
    this.status = document.createElement('span');
    this.status.className = 'find-status';
    this.status.setAttribute('aria-live', 'polite');
    this.box.append(
      this.input,
      this.status,
      iconButton('arrowUp', 'Older match', () => this.search('older')),
      iconButton('arrowDown', 'Newer match', () => this.search('newer')),
      iconButton('close', 'Close find', () => this.close()),
    );
    before.before(this.box);
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this.search(event.shiftKey ? 'newer' : 'older');
      }
    });
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.forget();
      this.timer = setTimeout(() => this.search('older'), TYPING_PAUSE_MS);
    });
    document.addEventListener('keydown', (event) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === 'f') {
        event.preventDefault();
        this.open();
      } else if (event.key === 'Escape' && !this.box.hidden && !(event.target instanceof HTMLTextAreaElement)) {
        // Escape in the message box stops a reply; anywhere else it closes find.
        event.preventDefault();
        this.close();
      }
    });
  }

  open(): void {
    this.box.hidden = false;
    this.input.focus();
    this.input.select();
  }

  close(): void {
    clearTimeout(this.timer);
    this.box.hidden = true;
    this.forget();
    this.status.textContent = '';
    this.callbacks.closed();
  }

  /** A new transcript: what was found belongs to the one before. */
  reset(): void {
    this.forget();
    this.status.textContent = '';
  }

  /**
   * The host's answer; ignored when the query changed since it was asked.
   * Its ordinal is that of the match the view lands on: the last one of the
   * message going older, the first going newer.
   */
  answered(message: FoundMessage): void {
    if (this.box.hidden || message.query !== this.input.value) return;
    if (message.hit === null) {
      this.forget();
      this.status.textContent = 'No results';
      return;
    }
    this.current = message.hit;
    this.ordinal = message.ordinal;
    this.total = message.total;
    this.marks = this.callbacks.reveal(message.hit, message.query) ?? [];
    this.markIndex = this.marks.length === 0 ? -1 : this.asked === 'older' ? this.marks.length - 1 : 0;
    this.show();
  }

  private search(direction: 'older' | 'newer'): void {
    clearTimeout(this.timer);
    const query = this.input.value;
    if (query.trim() === '') {
      this.status.textContent = '';
      return;
    }
    // The next match in the same message: no need to ask the host.
    const step = direction === 'older' ? -1 : 1;
    const next = this.markIndex + step;
    if (this.current !== undefined && this.markIndex >= 0 && next >= 0 && next < this.marks.length) {
      this.markIndex = next;
      this.ordinal += step;
      this.show();
      return;
    }
    this.asked = direction;
    this.status.textContent = 'Searching…';
    this.callbacks.find(query, direction, this.current);
  }

  /** Says which match this is, and puts it in view. */
  private show(): void {
    this.status.textContent = `${this.ordinal} of ${this.total} ${this.total === 1 ? 'match' : 'matches'}`;
    this.marks.forEach((mark, i) => mark.classList.toggle('current', i === this.markIndex));
    this.marks[this.markIndex]?.scrollIntoView({ block: 'center' });
  }

  private forget(): void {
    this.current = undefined;
    this.marks = [];
    this.markIndex = -1;
  }
}
