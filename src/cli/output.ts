import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { LineRedactor, type SecretSet } from '../core/redact';
import { TerminalRows } from '../core/terminalRows';

/**
 * The CLI's stdout and stderr (docs/architecture.md, "Evolution"): a gate
 * may print a gigabyte into a pipe whose reader takes 64 KiB now and then
 * (`| tee log`, a pager). Node queues whatever a pipe cannot take yet, in
 * memory, and `process.exit` throws that queue away. Here every write goes
 * through a queue of our own:
 *
 * - streamed command output is offered: beyond `backlogBytes` waiting it is
 *   dropped and counted, and once the reader has caught up one
 *   `[… N bytes not shown …]` line says how much; the command is never slowed;
 * - everything else (the run's lines, its tail, its outcome) is kept, always;
 * - the process exits only once both queues are written out.
 *
 * Every byte is redacted first, a whole line at a time, so a key split
 * across two writes is still caught (docs/architecture.md, "Secrets"); then
 * its control characters are shown as marks and streamed output gets its
 * prefix on every row (`TerminalRows`, docs/architecture.md, "Text bound for
 * a person").
 */

/** Streamed output waiting for a slow reader beyond this is dropped. */
export const BACKLOG_BYTES = 8 * 1024 * 1024;

/** Where bytes go: the parts of a Node writable stream the queue uses. */
export interface Sink {
  write(chunk: Uint8Array, done: (error?: Error | null) => void): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * The UTF-8 bytes of `text`. Laid out output is never Latin-1 (its rows
 * start with `│`), and on such a string writing into a buffer of the largest
 * size it can take, then copying what was written, is faster than
 * `Buffer.from` or TextEncoder (`npm run bench -- neutralise`).
 */
export function utf8Bytes(text: string): Buffer {
  const room = Buffer.allocUnsafe(text.length * 3);
  return Buffer.from(room.subarray(0, room.write(text)));
}

/** The line that stands for the output dropped while the reader was behind. */
export function droppedMarker(bytes: number): string {
  return `[… ${bytes.toLocaleString('en-US')} bytes not shown …]\n`;
}

/**
 * Bytes on their way to a sink, in order. Kept bytes always go out; offered
 * bytes are dropped, and counted, from the moment the backlog would pass the
 * limit until the sink has taken everything queued.
 */
export class OutputQueue {
  #items: Array<Buffer | undefined> = [];
  #head = 0;
  #queued = 0;
  #inFlight = 0;
  #waitingForDrain = false;
  #dropping = false;
  #dropped = 0;
  #endsLine = true;
  #broken = false;
  #idle: Array<() => void> = [];

  constructor(
    private readonly sink: Sink,
    private readonly backlogBytes = BACKLOG_BYTES,
  ) {}

  /** Bytes that must arrive. What was dropped before them is marked first, where it was dropped. */
  keep(bytes: Buffer): void {
    if (this.#broken || bytes.length === 0) return;
    this.#markDropped();
    this.#push(bytes);
  }

  /**
   * Bytes that may be dropped when the reader is this far behind; dropped,
   * they count as `shownAs` bytes not shown (the output's own length, before
   * Candor laid it out). False when they were dropped.
   */
  offer(bytes: Buffer, shownAs = bytes.length): boolean {
    if (this.#broken || bytes.length === 0) return !this.#broken;
    if (this.#dropping || this.#queued + this.#inFlight + bytes.length > this.backlogBytes) {
      this.#drop(shownAs);
      return false;
    }
    this.#push(bytes);
    return true;
  }

  /** Counts `count` offered bytes as not shown, as `offer` does past the backlog. */
  #drop(count: number): void {
    this.#dropping = true;
    this.#dropped += count;
    // Nothing queued (one chunk larger than the whole backlog): caught up already.
    if (this.#head === this.#items.length && !this.#waitingForDrain) this.#pump();
  }

  /** While dropping: `count` more bytes not shown, without making them into a Buffer first. */
  dropWhileDropping(count: number): boolean {
    if (this.#broken) return true;
    if (!this.#dropping) return false;
    this.#drop(count);
    return true;
  }

  /** Bytes held for the sink: queued here, or handed to it and not yet written out. */
  get backlog(): number {
    return this.#queued + this.#inFlight;
  }

  /** Whether offered bytes are being dropped right now. */
  get dropping(): boolean {
    return this.#dropping;
  }

  /** Resolves once everything queued, the last marker included, has been taken by the sink (or the sink failed). */
  idle(): Promise<void> {
    if (!this.#broken) this.#markDropped();
    return this.#isIdle() ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  /** The reader went away (EPIPE): nothing more can be written, and nothing is waited for. */
  broken(): void {
    this.#broken = true;
    this.#items = [];
    this.#head = 0;
    this.#queued = 0;
    this.#settle();
  }

  #push(bytes: Buffer): void {
    this.#items.push(bytes);
    this.#queued += bytes.length;
    this.#endsLine = bytes[bytes.length - 1] === 0x0a;
    this.#pump();
  }

  #markDropped(): void {
    if (this.#dropped === 0) return;
    const text = `${this.#endsLine ? '' : '\n'}${droppedMarker(this.#dropped)}`;
    this.#dropped = 0;
    this.#push(Buffer.from(text));
  }

  #pump(): void {
    while (!this.#waitingForDrain && !this.#broken && this.#head < this.#items.length) {
      const bytes = this.#items[this.#head] ?? Buffer.alloc(0);
      this.#items[this.#head++] = undefined;
      this.#queued -= bytes.length;
      this.#inFlight += bytes.length;
      const ok = this.sink.write(bytes, (error) => {
        this.#inFlight -= bytes.length;
        if (error) this.broken();
        else this.#pump();
      });
      if (!ok) {
        this.#waitingForDrain = true;
        this.sink.once('drain', () => {
          this.#waitingForDrain = false;
          this.#pump();
        });
      }
    }
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
      // Caught up: the sink has room and nothing waits. Say what was left out, and let output through again.
      if (this.#dropping && !this.#waitingForDrain && !this.#broken) {
        this.#dropping = false;
        this.#markDropped();
      }
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    this.#settle();
  }

  #isIdle(): boolean {
    return this.#broken || (this.#head === this.#items.length && this.#inFlight === 0 && this.#dropped === 0);
  }

  #settle(): void {
    if (!this.#isIdle()) return;
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }
}

/** What a `CliStream` is given besides its sink. */
export interface CliStreamOptions {
  readonly backlogBytes?: number;
  readonly maxLine?: number;
  /** The terminal's width now (`stdout.columns`), undefined for a pipe or a file: rows are broken at it. */
  readonly columns?: () => number | undefined;
}

/**
 * One of the CLI's two streams: redaction by whole lines, control
 * characters shown, rows laid out (`TerminalRows`), then the queue. Candor's
 * own text and streamed output are held apart until each ends a line, so a
 * gate's unfinished line never joins one of Candor's.
 */
export class CliStream {
  readonly #queue: OutputQueue;
  readonly #own: LineRedactor;
  readonly #streamed: LineRedactor;
  readonly #rows: TerminalRows;
  readonly #decoder = new StringDecoder('utf8');
  /** Which redactor holds an unfinished line, if either does. */
  #holding: 'own' | 'stream' | undefined;

  constructor(sink: Sink, secrets: SecretSet, options: CliStreamOptions = {}) {
    this.#queue = new OutputQueue(sink, options.backlogBytes);
    this.#own = new LineRedactor(secrets, options.maxLine ?? 65_536);
    this.#streamed = new LineRedactor(secrets, options.maxLine ?? 65_536);
    this.#rows = new TerminalRows(options.columns);
  }

  /** Text that must arrive: a line of the run, a message, its outcome. */
  write(chunk: string | Uint8Array): void {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(Buffer.from(chunk));
    if (text === '') return;
    if (this.#holding === 'stream') this.#offer(this.#streamed.flush());
    this.#holding = text.endsWith('\n') ? undefined : 'own';
    this.#keep(this.#own.push(text));
  }

  /** One line that must arrive. */
  line(text: string): void {
    this.write(`${text}\n`);
  }

  /** A command's output as it streams: dropped, and counted, while the reader is too far behind. */
  stream(chunk: string): void {
    if (chunk === '') return;
    // Whole lines while dropping go without being redacted or copied: nothing of them is shown, and nothing is held.
    if (this.#holding === undefined && chunk.endsWith('\n') && this.#queue.dropWhileDropping(Buffer.byteLength(chunk))) {
      this.#rows.lostRow();
      return;
    }
    if (this.#holding === 'own') this.#keep(this.#own.flush());
    this.#holding = chunk.endsWith('\n') ? undefined : 'stream';
    this.#offer(this.#streamed.push(chunk));
  }

  /** Writes what is still held (a last line without its newline); resolves once all of it is out. */
  end(): Promise<void> {
    this.#offer(this.#streamed.flush());
    this.#keep(this.#own.push(this.#decoder.end()) + this.#own.flush());
    this.#holding = undefined;
    return this.#queue.idle();
  }

  /** The reader is gone: stop writing, and stop waiting for it. */
  broken(): void {
    this.#queue.broken();
  }

  #keep(text: string): void {
    if (text !== '') this.#queue.keep(utf8Bytes(this.#rows.own(text)));
  }

  #offer(text: string): void {
    if (text === '') return;
    if (!this.#queue.offer(utf8Bytes(this.#rows.stream(text)), Buffer.byteLength(text))) this.#rows.lostRow();
  }
}

/**
 * Routes every write to `stream` (console lines included) through a
 * `CliStream` over the stream's own write; returns that `CliStream`.
 */
export function redactStream(stream: NodeJS.WriteStream, secrets: SecretSet, options: CliStreamOptions = {}): CliStream {
  const write = stream.write.bind(stream) as (chunk: Uint8Array, done: (error?: Error | null) => void) => boolean;
  const out = new CliStream({ write, once: (event, listener) => stream.once(event, listener) }, secrets, options);
  stream.on('error', () => out.broken());
  stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((err?: Error | null) => void), done?: (err?: Error | null) => void): boolean => {
    out.write(chunk);
    const callback = typeof encoding === 'function' ? encoding : done;
    if (callback) process.nextTick(callback);
    return true;
  }) as typeof stream.write;
  return out;
}

/**
 * Every write to `stream` redacted by whole lines; returns the function that
 * writes what is still held.
 */
export function redactWrites(stream: NodeJS.WriteStream, secrets: SecretSet, maxLine = 65_536): () => void {
  const out = redactStream(stream, secrets, { maxLine });
  return () => void out.end();
}

/** The CLI's stdout and stderr. */
export interface CliStreams {
  readonly stdout: CliStream;
  readonly stderr: CliStream;
}

/** Takes over the process's stdout and stderr; on a terminal, rows are broken at its width as it is now. */
export function processStreams(secrets: SecretSet): CliStreams {
  const columns = (stream: NodeJS.WriteStream) => (): number | undefined => (stream.isTTY ? stream.columns : undefined);
  return { stdout: redactStream(process.stdout, secrets, { columns: columns(process.stdout) }), stderr: redactStream(process.stderr, secrets, { columns: columns(process.stderr) }) };
}

/**
 * Ends the process with `code` once stdout and stderr are written out: no
 * queued byte is lost to `process.exit`. With `CANDOR_REPORT_PEAK_MEMORY=1`
 * the peak resident memory goes to stderr last (the memory bound is tested
 * and measured with it).
 */
export async function exitWhenWritten(streams: CliStreams, code: number, env: NodeJS.ProcessEnv = process.env): Promise<never> {
  process.exitCode = code;
  if (env.CANDOR_REPORT_PEAK_MEMORY === '1') streams.stderr.line(peakMemoryLine());
  await Promise.all([streams.stdout.end(), streams.stderr.end()]);
  process.exit(code);
}

/** `peak memory: VmHWM 81234 kB` on Linux; the kernel keeps the figure in /proc/self/status. */
export function peakMemoryLine(): string {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
    return `peak memory: VmHWM ${hwm ?? 'unknown'} kB`;
  } catch {
    return 'peak memory: VmHWM unknown (no /proc/self/status)';
  }
}
