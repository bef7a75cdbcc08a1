import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Durable JSON-lines files. Every JSONL file of Candor goes through here.
 *
 * A batch of lines is one `write` on a descriptor opened with O_APPEND, so two
 * processes appending at once interleave whole lines and never tear each
 * other's bytes (O_APPEND writes to regular files are atomic per call on
 * Linux and macOS local filesystems).
 *
 * Two ways to append: `appendJsonLine` writes and fsyncs before it returns
 * (rare records: rants, triage, evolution runs, drift events), and
 * `AppendQueue` writes and fsyncs on libuv's threads, in order, so the chat's
 * records never block the extension host (docs/architecture.md, "Sessions").
 *
 * Reads are tolerant: a line that is not JSON, not an object, or cut short is
 * skipped and counted; nothing is ever removed from the file.
 */

export interface SkippedLine {
  readonly lineNumber: number;
  readonly reason: 'not-json' | 'not-object' | 'truncated';
  readonly preview: string;
}

export interface JsonlRead<T> {
  readonly records: T[];
  readonly skipped: SkippedLine[];
}

export interface AppendOptions {
  /** fsync after the write; on by default: these are records a user relies on. */
  readonly sync?: boolean;
}

export function appendJsonLine(file: string, record: object, options: AppendOptions = {}): void {
  const line = jsonLine(record);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'a+');
  try {
    const prefix = needsLeadingNewline(fd) ? '\n' : '';
    fs.writeSync(fd, prefix + line + '\n');
    if (options.sync !== false) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function jsonLine(record: object): string {
  const line = JSON.stringify(record);
  if (line.includes('\n')) {
    // JSON.stringify never emits a raw newline; guard against a future change.
    throw new Error('refusing to append a record that serializes across lines');
  }
  return line;
}

/**
 * A file whose last byte is not a newline ends in a truncated line (a crash
 * mid-write, or a writer of another program). Starting our line on a fresh
 * line keeps that damage to one skipped line instead of corrupting ours too.
 */
function needsLeadingNewline(fd: number): boolean {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/**
 * Appends that do not wait: `append` returns at once and the line is written
 * and fsynced in the background, after every line appended to that file
 * before it. Lines that queue up while a write is under way go out together
 * in the next write (one write, one fsync). `flushed` is the acknowledgement:
 * once it resolves, every line appended before the call is on disk.
 */
export class AppendQueue {
  private readonly files = new Map<string, FileAppends>();

  append(file: string, record: object): void {
    const line = jsonLine(record);
    let queue = this.files.get(file);
    if (!queue) {
      queue = new FileAppends(file);
      this.files.set(file, queue);
    }
    queue.push(line);
  }

  /**
   * Resolves when every line appended so far (to `file`, or to any file) is
   * on disk; rejects with the first write that failed since the last flush.
   */
  async flushed(file?: string): Promise<void> {
    const queues = file === undefined ? [...this.files.values()] : [this.files.get(file)].filter((q) => q !== undefined);
    const failures = await Promise.all(queues.map((q) => q.settled()));
    const failure = failures.find((f) => f !== undefined);
    if (failure !== undefined) throw failure;
  }
}

class FileAppends {
  /** Lines waiting for the write under way to finish; they go out together. */
  private waiting: string[] | undefined;
  /** Settles when the newest batch has been written or has failed. */
  private last: Promise<void> = Promise.resolve();
  private failure: Error | undefined;

  constructor(private readonly file: string) {}

  push(line: string): void {
    if (this.waiting) {
      this.waiting.push(line);
      return;
    }
    const batch = [line];
    this.waiting = batch;
    this.last = this.last
      .then(() => {
        // From here on, new lines start the next batch: this one is being written.
        if (this.waiting === batch) this.waiting = undefined;
        return appendLines(this.file, batch);
      })
      .catch((err: unknown) => {
        this.failure ??= err instanceof Error ? err : new Error(String(err));
      });
  }

  /** Waits for every batch so far; returns (and forgets) the first failure among them. */
  async settled(): Promise<Error | undefined> {
    let last: Promise<void>;
    do {
      last = this.last;
      await last;
    } while (last !== this.last);
    const failure = this.failure;
    this.failure = undefined;
    return failure;
  }
}

async function appendLines(file: string, lines: readonly string[]): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const handle = await fs.promises.open(file, 'a+');
  try {
    const { size } = await handle.stat();
    let prefix = '';
    if (size > 0) {
      const { buffer } = await handle.read(Buffer.alloc(1), 0, 1, size - 1);
      if (buffer[0] !== 0x0a) prefix = '\n';
    }
    const data = Buffer.from(`${prefix}${lines.join('\n')}\n`, 'utf8');
    // One write call carries the whole batch; a short write (rare on local files) continues where it stopped.
    for (let written = 0; written < data.length; ) {
      const { bytesWritten } = await handle.write(data, written, data.length - written, null);
      written += bytesWritten;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The one queue of this process: session records go through it, and the extension flushes it when it stops. */
export const appendQueue = new AppendQueue();

export function readJsonLines<T = Record<string, unknown>>(file: string): JsonlRead<T> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], skipped: [] };
    throw err;
  }
  return parseJsonLines<T>(text);
}

export interface TailRead<T> extends JsonlRead<T> {
  /** The file was replaced, removed or cut shorter: what earlier reads returned no longer holds. */
  readonly restarted: boolean;
  /** The file ends in bytes after its last newline: a line still being written, or cut short. */
  readonly pending: boolean;
}

/**
 * Follows a JSON-lines file that this and other processes append to. The
 * first read takes the whole file; each later one only the complete lines
 * added since, so a reader that keeps its own totals never replays the file.
 */
export class JsonlTail<T = Record<string, unknown>> {
  private offset = 0;
  private lines = 0;
  private identity: string | undefined;

  constructor(readonly file: string) {}

  read(): TailRead<T> {
    let fd: number;
    try {
      fd = fs.openSync(this.file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const restarted = this.identity !== undefined;
      this.reset(undefined);
      return { records: [], skipped: [], restarted, pending: false };
    }
    try {
      const stat = fs.fstatSync(fd);
      const identity = `${stat.dev}:${stat.ino}`;
      const restarted = this.identity !== undefined && (identity !== this.identity || stat.size < this.offset);
      if (restarted) this.reset(identity);
      this.identity = identity;
      const length = stat.size - this.offset;
      if (length <= 0) return { records: [], skipped: [], restarted, pending: false };
      const buffer = Buffer.alloc(length);
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, buffer, got, length - got, this.offset + got);
        if (n === 0) break;
        got += n;
      }
      // A newline byte never occurs inside a UTF-8 sequence: cutting after one never splits a character.
      const complete = got === 0 ? 0 : buffer.lastIndexOf(0x0a, got - 1) + 1;
      const text = buffer.toString('utf8', 0, complete);
      const { records, skipped } = parseJsonLines<T>(text);
      const base = this.lines;
      this.lines += text.split('\n').length - 1;
      this.offset += complete;
      const pending = buffer.toString('utf8', complete, got).trim() !== '';
      return { records, skipped: skipped.map((s) => ({ ...s, lineNumber: s.lineNumber + base })), restarted, pending };
    } finally {
      fs.closeSync(fd);
    }
  }

  private reset(identity: string | undefined): void {
    this.offset = 0;
    this.lines = 0;
    this.identity = identity;
  }
}

export function parseJsonLines<T = Record<string, unknown>>(text: string): JsonlRead<T> {
  const records: T[] = [];
  const skipped: SkippedLine[] = [];
  const lines = text.split('\n');
  const endsWithNewline = text.endsWith('\n');
  lines.forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const isLast = index === lines.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped.push({
        lineNumber: index + 1,
        reason: isLast && !endsWithNewline ? 'truncated' : 'not-json',
        preview: line.slice(0, 80),
      });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      skipped.push({ lineNumber: index + 1, reason: 'not-object', preview: line.slice(0, 80) });
      return;
    }
    records.push(value as T);
  });
  return { records, skipped };
}

/** ISO-8601 UTC timestamp, the `ts` of every record. */
export function isoNow(clock: () => Date = () => new Date()): string {
  return clock().toISOString();
}
