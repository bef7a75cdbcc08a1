/**
 * A server that leaves a model's thinking in the content (llama.cpp with
 * `--reasoning-format none`, some proxies) streams `<think>…</think>` at the
 * start of the reply. This splits it off as it streams, tags split across
 * deltas included, so the thinking is shown apart from the answer and never
 * sent back as part of it. Only a block at the very start counts: a
 * `<think>` later in a reply is text.
 */

const OPEN = '<think>';
const CLOSE = '</think>';

export interface Piece {
  readonly kind: 'text' | 'reasoning';
  readonly text: string;
}

export class ThinkSplitter {
  private mode: 'start' | 'thinking' | 'after' | 'text' = 'start';
  private held = '';

  /** The pieces of a content delta, in order. */
  push(delta: string): Piece[] {
    if (this.mode === 'text') return delta ? [{ kind: 'text', text: delta }] : [];
    this.held += delta;
    const out: Piece[] = [];
    // A step that changes the mode may leave more to read in the new one.
    for (let before = ''; before !== this.mode && (this.mode as string) !== 'text'; ) {
      before = this.mode;
      this.step(out);
    }
    return out;
  }

  /** The end of the reply: what was held back waiting for a tag. */
  end(): Piece[] {
    const rest = this.held;
    this.held = '';
    if (rest === '' || (this.mode === 'after' && rest.trim() === '')) return [];
    return [{ kind: this.mode === 'thinking' ? 'reasoning' : 'text', text: rest }];
  }

  private step(out: Piece[]): void {
    switch (this.mode) {
      case 'start': {
        const lead = this.held.trimStart();
        if (lead.startsWith(OPEN)) {
          this.held = lead.slice(OPEN.length);
          this.mode = 'thinking';
        } else if (!OPEN.startsWith(lead) || (lead === '' && this.held.length > 64)) {
          this.flushAs('text', out);
        }
        return;
      }
      case 'thinking': {
        const at = this.held.indexOf(CLOSE);
        if (at !== -1) {
          if (at > 0) out.push({ kind: 'reasoning', text: this.held.slice(0, at) });
          this.held = this.held.slice(at + CLOSE.length);
          this.mode = 'after';
          return;
        }
        const keep = partialTagLength(this.held, CLOSE);
        const ready = this.held.slice(0, this.held.length - keep);
        if (ready) out.push({ kind: 'reasoning', text: ready });
        this.held = this.held.slice(this.held.length - keep);
        return;
      }
      case 'after': {
        // The answer after the block starts after its blank lines.
        const rest = this.held.replace(/^\s+/, '');
        if (rest === '') return;
        this.held = rest;
        this.flushAs('text', out);
        return;
      }
      default:
        return;
    }
  }

  private flushAs(kind: 'text', out: Piece[]): void {
    if (this.held) out.push({ kind, text: this.held });
    this.held = '';
    this.mode = 'text';
  }
}

/** How many characters at the end of `text` could be the start of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) {
    if (text.endsWith(tag.slice(0, k))) return k;
  }
  return 0;
}
