/** The last `limit` bytes of a stream, however much passes through. */
export class Tail {
  #chunks: Buffer[] = [];
  #size = 0;
  #total = 0;

  constructor(readonly limit = 4096) {}

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    // Compact only once twice the limit piled up, so a stream of tiny writes stays linear.
    if (this.#size > this.limit * 2) {
      const joined = Buffer.concat(this.#chunks);
      const kept = joined.subarray(joined.length - this.limit);
      this.#chunks = [Buffer.from(kept)];
      this.#size = kept.length;
    }
  }

  /** Bytes seen in all. */
  get total(): number {
    return this.#total;
  }

  /** The tail as text, starting at a character boundary, with a marker when earlier output was dropped. */
  text(): string {
    const joined = Buffer.concat(this.#chunks);
    let bytes = joined.length > this.limit ? joined.subarray(joined.length - this.limit) : joined;
    let start = 0;
    while (start < bytes.length && start < 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    bytes = bytes.subarray(start);
    const text = bytes.toString('utf8');
    const dropped = this.#total - bytes.length;
    return dropped > 0 ? `[… ${dropped.toLocaleString('en-US')} earlier bytes not kept]\n${text}` : text;
  }
}
