/**
 * Splits a byte stream into lines without ever holding more than `maxBytes`
 * of one: a longer line is reported once through `onLong` (with its first
 * `maxBytes`) and its rest is skipped up to the next newline. Chunks are
 * kept as they come and joined once per line, so a 5 MB line read in 64 KB
 * pieces costs one copy, not eighty.
 */
export class LineSplitter {
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** Inside a line already reported as too long: drop bytes up to its newline. */
  #skipping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onLong: (start: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length) {
      const newline = chunk.indexOf(0x0a, from);
      const end = newline === -1 ? chunk.length : newline;
      this.#take(chunk.subarray(from, end));
      if (newline === -1) return;
      this.#endLine();
      from = newline + 1;
    }
  }

  /** Whatever is held as a last line (the stream ended without a newline). */
  flush(): void {
    if (this.#heldBytes > 0) this.#endLine();
    this.#skipping = false;
  }

  #take(piece: Buffer): void {
    if (this.#skipping || piece.length === 0) return;
    if (this.#heldBytes + piece.length <= this.maxBytes) {
      this.#held.push(piece);
      this.#heldBytes += piece.length;
      return;
    }
    this.#held.push(piece.subarray(0, this.maxBytes - this.#heldBytes));
    const start = Buffer.concat(this.#held);
    this.#held = [];
    this.#heldBytes = 0;
    this.#skipping = true;
    this.onLong(start);
  }

  #endLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      return;
    }
    const line = this.#held.length === 1 ? (this.#held[0] ?? Buffer.alloc(0)) : Buffer.concat(this.#held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    this.onLine(line);
  }
}
