import type { FoundMessage } from '../src/protocol/chat';
import { button } from './toolkit';

/** Waits this long after the last keystroke before searching. */
const TYPING_PAUSE_MS = 250;

export interface FindCallbacks {
  /** Ask the host for the next match going `direction` from `from` (from the newest when absent). */
  find(query: string, direction: 'older' | 'newer', from: string | undefined): void;
  /** Show the entry found, with `query` marked in it; false when the view does not have it. */
  reveal(id: string, query: string): boolean;
  /** The find box closed: take the marks off. */
  closed(): void;
}

/**
 * Find in chat (Ctrl+F): a box of the chat's own, since the browser's find
 * sees only the entries loaded. The host searches the whole session; the
 * answer brings the entries down to the match, and the view scrolls to it
 * (docs/architecture.md, "Sessions"). Enter finds the next older match,
 * Shift+Enter the next newer one, Escape closes the box.
 */
export class FindBox {
  private readonly box: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly status: HTMLElement;
  private current: string | undefined;
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
      button('↑', 'icon', () => this.search('older'), 'Older match'),
      button('↓', 'icon', () => this.search('newer'), 'Newer match'),
      button('✕', 'icon', () => this.close(), 'Close find'),
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
      this.current = undefined;
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
    this.current = undefined;
    this.status.textContent = '';
    this.callbacks.closed();
  }

  /** A new transcript: what was found belongs to the one before. */
  reset(): void {
    this.current = undefined;
    this.status.textContent = '';
  }

  /** The host's answer; ignored when the query changed since it was asked. */
  answered(message: FoundMessage): void {
    if (this.box.hidden || message.query !== this.input.value) return;
    if (message.hit === null) {
      this.current = undefined;
      this.status.textContent = 'No results';
      return;
    }
    this.current = message.hit;
    this.status.textContent = `${message.ordinal} of ${message.total}`;
    this.callbacks.reveal(message.hit, message.query);
  }

  private search(direction: 'older' | 'newer'): void {
    clearTimeout(this.timer);
    const query = this.input.value;
    if (query.trim() === '') {
      this.status.textContent = '';
      return;
    }
    this.status.textContent = 'Searching…';
    this.callbacks.find(query, direction, this.current);
  }
}
