/** The notes of one refresh: each said once, at most MAX of them, then how many more. */
export class Notes {
  static readonly MAX = 20;
  readonly #seen = new Set<string>();
  #more = 0;

  add(note: string): void {
    if (this.#seen.has(note)) return;
    if (this.#seen.size >= Notes.MAX) this.#more++;
    else this.#seen.add(note);
  }

  list(): string[] {
    const notes = [...this.#seen];
    if (this.#more > 0) notes.push(`and ${this.#more} more like these`);
    return notes;
  }
}
