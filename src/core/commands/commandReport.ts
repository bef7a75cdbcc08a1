import * as path from 'node:path';
import type { CommandResult } from '../sandbox/command';
import { oneLine } from '../text';
import { isInside } from '../realPath';

/**
 * What the model is told about a command it ran (`run_command`): how it
 * ended, its last lines as a terminal would have shown them, and, when its
 * output shows it ran into the sandbox, why, in plain words. The model
 * cannot see the sandbox; without the why it would retry a write to the
 * workspace or a download forever.
 */

/** How the command ended, as the sandbox's runner says it (`crashed`: the sandbox could not be started at all). */
export interface ViewCommandResult extends Pick<CommandResult, 'exitCode' | 'timedOut' | 'cancelled' | 'crashed' | 'ms' | 'limitHit'> {
  /** The last lines, at most TAIL_BYTES, escape sequences stripped. */
  readonly tail: string;
  /** What it tried that the sandbox refused, for the model ("it tried to reach the network, …"). */
  readonly explanation?: string;
}

export const TAIL_BYTES = 4096;

/** Control characters by code: a regular expression may not spell them out (lint). */
const ESC = String.fromCharCode(0x1b);
const BEL = String.fromCharCode(0x07);
const CSI8 = String.fromCharCode(0x9b);
/** CSI and OSC sequences (7- and 8-bit), the other escape sequences, and one cut off at the end. */
const ANSI = new RegExp(`${ESC}\\][^${BEL}${ESC}]*(?:${BEL}|${ESC}\\\\|$)|(?:${ESC}\\[|${CSI8})[0-?]*[ -/]*(?:[@-~]|$)|${ESC}[ -/]*[0-~]?`, 'g');
/** The C0 controls but tab, and DEL (a line break never reaches terminalLine). */
const CONTROLS = new RegExp(`[${String.fromCharCode(0)}-${String.fromCharCode(8)}${String.fromCharCode(0x0b)}-${String.fromCharCode(0x1f)}${String.fromCharCode(0x7f)}]`, 'g');

/** `text` without terminal escape sequences (colours, cursor moves, titles, links). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The marker Tail (sandbox/tail.ts) puts before a tail it cut. */
const TAIL_MARKER = /^\[… ([\d,]+) earlier bytes not kept\]\n/;

/** A Tail's text without the partial line a cut leaves at its start (the marker stays). */
export function withoutCutLine(raw: string): string {
  const marker = TAIL_MARKER.exec(raw);
  if (marker === null) return raw;
  const body = raw.slice(marker[0].length);
  return marker[0] + body.slice(body.indexOf('\n') + 1);
}

/**
 * The end of `raw` (a Tail's text) as the model gets it: escape sequences
 * stripped (`clean`, which may redact too), each line as a terminal shows it
 * (a progress bar redrawn with `\r` is its last state), whole lines only,
 * and at most `maxBytes` with the marker that says how much came before.
 */
export function lastLines(raw: string, maxBytes: number = TAIL_BYTES, clean: (text: string) => string = stripAnsi): string {
  const marker = TAIL_MARKER.exec(raw);
  const dropped = marker !== null ? Number((marker[1] ?? '0').replace(/,/g, '')) : 0;
  let body = marker !== null ? raw.slice(marker[0].length) : raw;
  const total = dropped + Buffer.byteLength(body);
  // A cut tail starts mid-line (and maybe mid-escape): that line goes.
  if (dropped > 0) body = body.slice(body.indexOf('\n') + 1);
  const lines = clean(body)
    .split('\n')
    .map((line) => terminalLine(line));
  while (lines.length > 0 && (lines.at(-1) ?? '').trim() === '') lines.pop();
  const kept: string[] = [];
  const note = `[… earlier output not kept: ${total.toLocaleString('en-US')} bytes in all]`;
  let size = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    const bytes = Buffer.byteLength(line) + 1;
    const room = maxBytes - Buffer.byteLength(note) - 1 - size;
    if (bytes > room) {
      // A last line too long for the room keeps its end.
      if (kept.length === 0) kept.unshift(endThatFits(line, Math.max(0, room - 1)));
      break;
    }
    kept.unshift(line);
    size += bytes;
  }
  const text = kept.join('\n');
  return kept.length < lines.length || dropped > 0 ? `${note}\n${text}` : text;
}

/** What a terminal shows of a line: the part after its last carriage return, without other control characters. */
function terminalLine(line: string): string {
  const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
  return trimmed.slice(trimmed.lastIndexOf('\r') + 1).replace(CONTROLS, '');
}

function endThatFits(line: string, maxBytes: number): string {
  let end = line.slice(-maxBytes);
  while (Buffer.byteLength(end) > maxBytes) end = end.slice(1);
  return end;
}

/** What a command tried that the sandbox refused, as the explanation says it. */
export interface ExplainContext {
  /** Where the view is mounted (the workspace's real path): writes in it are the command's own. */
  readonly workspace: string;
  /** Where the command started, as it sees it: a relative path in its output is resolved against it. */
  readonly cwd: string;
  /** Folders outside the view it may write: the throwaway home and temp folder, and the sandbox's /tmp. */
  readonly writable: readonly string[];
  /** The parts of the view it may only read: its `.git`, the dependency folders. */
  readonly readOnly: readonly string[];
  readonly network: boolean;
}

/** A line worth a closer look: a refused write or connection, as programs print them. */
const CANDIDATE = /read-only file system|EROFS|permission denied|EACCES|ENETUNREACH|network is unreachable|EAI_AGAIN|ENOTFOUND|temporary failure in name resolution|could not resolve host|name or service not known|ECONNREFUSED|connection refused|couldn't connect to server|failed to connect to/i;
const READ_ONLY = /read-only file system|\bEROFS\b/i;
const DENIED = /permission denied|\bEACCES\b/i;
/**
 * A denial is a refused write only when the program says it was writing
 * (`cat /proc/1/environ` is refused too), and only outside the view or in
 * its read-only parts (a file the command made unwritable is its own doing).
 */
const WRITING = /\b(cannot (create|touch|remove|move|overwrite|make|write|open .* for writing)|EACCES: permission denied, (mkdir|rmdir|unlink|rename|copyfile|symlink|link|mkdtemp|utime|chmod|chown)|can't create|unable to (create|write)|failed to (create|write))/i;
const OFFLINE = /\bENETUNREACH\b|network is unreachable|\bEAI_AGAIN\b|\bENOTFOUND\b|temporary failure in name resolution|could not resolve host|name or service not known/i;
const REFUSED = /\bECONNREFUSED\b|connection refused|couldn't connect to server|failed to connect to/i;
/** The path a program names before the refusal (`touch: cannot touch '/x': Read-only file system`, `sh: 1: cannot create x/y: …`), quoted or bare. */
const PATH_BEFORE = /(?:['‘"`]([^'’"`\n]+)['’"`]|([^\s'‘’"`]+)):\s*(?:read-only file system|permission denied)/i;
/** The path quoted after it (`EROFS: read-only file system, open '/x'`, Python's `[Errno 30] Read-only file system: '/x'`). */
const PATH_AFTER = /(?:read-only file system|EROFS|permission denied|EACCES)[^'‘"`\n]*['‘"`]([^'’"`\n]+)['’"`]/i;
/** A line longer than this is looked at by its end. */
const MAX_LINE = 4096;

/**
 * Reads the whole output as it streams (a flood would push the evidence out
 * of the tail) for signs that the sandbox refused something: a write outside
 * the view, or into its read-only parts, and, with the network off, a
 * connection. Linear in the output; it stops looking once it has found all
 * it can report.
 */
export class OutputExplainer {
  readonly #context: ExplainContext;
  #partial = '';
  #write: { readonly path?: string } | undefined;
  #offline = false;

  constructor(context: ExplainContext) {
    this.#context = context;
  }

  push(chunk: string): void {
    if (this.#complete()) return;
    const text = this.#partial + chunk;
    const end = text.lastIndexOf('\n');
    this.#partial = (end >= 0 ? text.slice(end + 1) : text).slice(-MAX_LINE);
    if (end >= 0) this.#lines(text.slice(0, end));
  }

  /** The explanation, once the output has ended; undefined when nothing was refused. */
  explanation(): string | undefined {
    if (this.#partial !== '') this.#lines(this.#partial);
    this.#partial = '';
    const parts: string[] = [];
    if (this.#write !== undefined) parts.push(this.#writeWords(this.#write.path));
    if (this.#offline) parts.push('it tried to reach the network, which is off for commands (candor.commands.network): no host, not even a service on this machine\'s loopback, answers inside the sandbox');
    return parts.length > 0 ? parts.join('; ') : undefined;
  }

  #complete(): boolean {
    return this.#write !== undefined && (this.#offline || this.#context.network);
  }

  #lines(text: string): void {
    if (!CANDIDATE.test(text)) return;
    for (const raw of text.split('\n')) {
      const line = stripAnsi(raw.slice(-MAX_LINE));
      if (this.#write === undefined) {
        if (READ_ONLY.test(line)) this.#write = { path: pathIn(line, this.#context.cwd) };
        else if (DENIED.test(line) && WRITING.test(line)) {
          const target = pathIn(line, this.#context.cwd);
          if (target !== undefined && (this.#outsideView(target) || this.#context.readOnly.some((dir) => isInside(dir, target)))) this.#write = { path: target };
        }
      }
      // With the network off the sandbox's own loopback is its only interface: a refused connection is one to it, never to a host service.
      if (!this.#context.network && !this.#offline && (OFFLINE.test(line) || REFUSED.test(line))) this.#offline = true;
      if (this.#complete()) return;
    }
  }

  #outsideView(target: string): boolean {
    return ![this.#context.workspace, ...this.#context.writable].some((dir) => isInside(dir, target));
  }

  #writeWords(target: string | undefined): string {
    // Inside the view, only what it shows read-only refuses a write: the repository's .git and the dependency folders.
    if (target !== undefined && isInside(this.#context.workspace, target)) {
      return `it tried to write ${target}, which commands may only read: the workspace's .git and dependency folders are read-only in its view, and the workspace itself is read-only to them`;
    }
    return `it tried to write outside its view of the workspace${target !== undefined ? ` (${target})` : ''}: commands can write only in the view; the workspace itself is read-only to them`;
  }
}

/** The path a refusal names, resolved against the command's folder; undefined when the line names none. */
function pathIn(line: string, cwd: string): string | undefined {
  const before = PATH_BEFORE.exec(line);
  // A bare word before the colon is a path only with a slash in it ("EROFS: …" is not one).
  const found = before?.[1] ?? (before?.[2]?.includes('/') === true ? before[2] : undefined) ?? PATH_AFTER.exec(line)?.[1];
  return found !== undefined && found !== '' ? path.posix.resolve(cwd, found) : undefined;
}

/** What the model reads: the command, how it ended, why the sandbox refused it something, and its last lines. */
export function describeForModel(r: ViewCommandResult, command: string, timeoutMs: number): string {
  const seconds = `${(r.ms / 1000).toFixed(1)} s`;
  const limit = timeoutMs < 10_000 ? `${(timeoutMs / 1000).toFixed(1)} s` : `${Math.round(timeoutMs / 1000)} s`;
  let status: string;
  if (r.crashed) status = 'could not be started';
  else if (r.cancelled) status = `was stopped by the user after ${seconds}, before it finished`;
  else if (r.timedOut) status = `timed out after ${limit} (the time limit of a command) and was ended`;
  else if (r.exitCode !== null) status = `exited with code ${r.exitCode} after ${seconds}`;
  else status = `was ended by a signal after ${seconds}`;
  const lines = [`$ ${oneLine(command, 300)}`, `It ${status}${r.limitHit !== undefined ? `; it ${r.limitHit}` : ''}.`];
  if (r.explanation !== undefined) lines.push(`${r.explanation.charAt(0).toUpperCase()}${r.explanation.slice(1)}.`);
  lines.push(r.tail.trim() === '' ? 'It printed nothing.' : `Its last lines:\n${r.tail}`);
  return lines.join('\n');
}
