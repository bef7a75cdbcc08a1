import { stripVTControlCharacters } from 'node:util';

/**
 * What the gate's test runner says it ran (docs/architecture.md,
 * "Evolution"): the passing, failing and skipped counts from the summary
 * block that mocha, node's test runner, jest, vitest or pytest prints at the
 * end of its output. Read from the gate's tail, colours stripped.
 *
 * The rule, so that a test whose own output imitates a summary cannot
 * fool it: a block counts only in the exact shape its runner prints
 * (indentation included), and only when nothing follows it but what that
 * runner itself prints after its summary (mocha's numbered failure list,
 * node's "failing tests" list, jest's snapshot and time lines, vitest's
 * start and duration lines), blank lines and a package manager's own
 * closing lines. That is the last block in honest output. When no block
 * passes, or more than one does (a failure message that copies a whole
 * summary, list and all), there is no answer: `undefined`, and the caller
 * says no summary line was found rather than guess. When a gate runs two
 * suites one after the other, only the last one's block can pass (unless
 * the first is mocha with failures: its failure list may hold any text, so
 * the second suite could be part of it, and there is no answer).
 */

export type TestRunner = 'mocha' | 'node' | 'jest' | 'vitest' | 'pytest';

export interface GateCounts {
  readonly runner: TestRunner;
  readonly passing: number;
  readonly failing: number;
  /** Skipped, pending, todo (and for pytest also xfailed and deselected): tests that did not run as a pass or a failure. */
  readonly skipped: number;
}

interface Block {
  readonly counts: GateCounts;
  /** The index of the first line after the block. */
  readonly end: number;
}

interface RunnerShape {
  /** The runner's summary block starting at `lines[at]`, if one does. */
  block(lines: readonly string[], at: number): Block | undefined;
  /** Whether `after` holds only what the runner prints after that block. */
  trailer(after: readonly string[], counts: GateCounts): boolean;
}

export function parseGateSummary(tail: string): GateCounts | undefined {
  const lines = plainLines(tail);
  const found: GateCounts[] = [];
  for (let at = 0; at < lines.length; at++) {
    for (const shape of SHAPES) {
      const block = shape.block(lines, at);
      if (block !== undefined && shape.trailer(lines.slice(block.end), block.counts)) found.push(block.counts);
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

/**
 * Lines as a terminal would show them: escapes stripped, and of a line
 * redrawn with `\r` only its last state. After the gate's "earlier bytes not
 * kept" marker the first line is a cut one, and is left out: a summary line
 * cut inside a number would lie.
 */
function plainLines(text: string): string[] {
  const lines = stripVTControlCharacters(text)
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r', line.length - 2) + 1).trimEnd());
  return /^\[… [\d,]+ earlier bytes not kept\]$/.test(lines[0] ?? '') ? lines.slice(2) : lines;
}

/** Lines any runner may be followed by: blanks, and what npm, pnpm, yarn and make print when a script fails. */
const CLOSING_NOISE = [/^$/, /^npm (?:ERR!|error|warn|WARN|notice)\b/, /^ ?ELIFECYCLE\b/, /^error Command failed with exit code \d+\.$/, /^info Visit https:\/\/yarnpkg\.com\//, /^make(?:\[\d+\])?: \*\*\* /];

function onlyNoise(lines: readonly string[], own: readonly RegExp[] = []): boolean {
  return lines.every((line) => CLOSING_NOISE.some((re) => re.test(line)) || own.some((re) => re.test(line)));
}

function firstFilled(lines: readonly string[]): number {
  const index = lines.findIndex((line) => line !== '');
  return index === -1 ? lines.length : index;
}

/** `N word` parts, each word one of `words` (a plural `s` allowed), summed per word; undefined when any part is something else. */
function countParts(parts: readonly string[], words: readonly string[]): Map<string, number> | undefined {
  const counts = new Map<string, number>();
  for (const part of parts) {
    const m = /^(\d+) ([a-z]+?)s?$/.exec(part.trim());
    if (m === null || !words.includes(m[2] ?? '')) return undefined;
    counts.set(m[2] ?? '', (counts.get(m[2] ?? '') ?? 0) + Number(m[1]));
  }
  return counts;
}

const n = (counts: ReadonlyMap<string, number>, ...words: string[]): number => words.reduce((sum, word) => sum + (counts.get(word) ?? 0), 0);

/**
 * mocha's epilogue: `  N passing (12ms)`, then `  N pending` and `  N failing`
 * when there are any, two spaces in. After it: nothing, or the numbered
 * failure list `  1) …` to `  N) …`, whatever the messages in it say.
 */
const MOCHA: RunnerShape = {
  block(lines, at) {
    const passing = /^ {2}(\d+) passing \(\d+(?:ms|s|m|h|d)\)$/.exec(lines[at] ?? '');
    if (passing === null) return undefined;
    let end = at + 1;
    const pending = /^ {2}(\d+) pending$/.exec(lines[end] ?? '');
    if (pending !== null) end++;
    const failing = /^ {2}(\d+) failing$/.exec(lines[end] ?? '');
    if (failing !== null) end++;
    return { end, counts: { runner: 'mocha', passing: Number(passing[1]), failing: Number(failing?.[1] ?? 0), skipped: Number(pending?.[1] ?? 0) } };
  },
  trailer(after, counts) {
    if (counts.failing === 0) return onlyNoise(after);
    const list = after.slice(firstFilled(after));
    const numbers = list.flatMap((line) => /^ {2}(\d+)\) \S/.exec(line)?.[1] ?? []).map(Number);
    return /^ {2}1\) \S/.test(list[0] ?? '') && numbers.length === counts.failing && numbers.every((value, index) => value === index + 1);
  },
};

/**
 * node's test runner: `# tests N` … `# duration_ms X` in TAP, the same with
 * `ℹ ` from the spec reporter. TAP ends there; spec may add its
 * `✖ failing tests:` list, whose messages are indented.
 */
const NODE: RunnerShape = {
  block(lines, at) {
    const first = /^(#|ℹ) tests \d+$/.exec(lines[at] ?? '');
    if (first === null) return undefined;
    const prefix = first[1] ?? '#';
    const values = new Map<string, number>();
    let end = at;
    while (end < lines.length) {
      const m = /^(#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) (\d+(?:\.\d+)?)$/.exec(lines[end] ?? '');
      if (m === null || m[1] !== prefix || values.has(m[2] ?? '')) break;
      values.set(m[2] ?? '', Number(m[3]));
      end++;
    }
    if (!values.has('pass') || !values.has('fail')) return undefined;
    return { end, counts: { runner: 'node', passing: n(values, 'pass'), failing: n(values, 'fail', 'cancelled'), skipped: n(values, 'skipped', 'todo') } };
  },
  trailer(after) {
    return onlyNoise(after) || after[firstFilled(after)] === '✖ failing tests:';
  },
};

/**
 * jest's summary (printed on stderr): `Test Suites: … total`, then
 * `Tests:       1 failed, 2 skipped, 1 todo, 5 passed, 9 total`, then its
 * snapshot and time lines and "Ran all test suites."
 */
const JEST: RunnerShape = {
  block(lines, at) {
    if (!/^Test Suites: (?:\d+ (?:failed|skipped|passed), )*(?:\d+ of )?\d+ total$/.test(lines[at] ?? '')) return undefined;
    const tests = /^Tests: {7}((?:\d+ (?:failed|skipped|todo|passed), )*)\d+ total$/.exec(lines[at + 1] ?? '');
    const parts = tests === null ? undefined : countParts((tests[1] ?? '').split(', ').filter((part) => part !== ''), ['failed', 'skipped', 'todo', 'passed']);
    if (parts === undefined) return undefined;
    return { end: at + 2, counts: { runner: 'jest', passing: n(parts, 'passed'), failing: n(parts, 'failed'), skipped: n(parts, 'skipped', 'todo') } };
  },
  trailer(after) {
    return onlyNoise(after, [/^Snapshots: {3}\S/, /^Time: {8}\S/, /^█+$/, /^Ran all test suites\b.*\.$/, /^Jest did not exit one second after the test run has completed\.$/, /^This usually means that there are asynchronous operations\b/, /^Force exiting Jest\b/]);
  },
};

/**
 * vitest's summary: ` Test Files  1 passed (1)`, then
 * `      Tests  2 failed | 5 passed | 1 skipped | 1 todo (9)` (or `no tests`),
 * then its type-error, error, start and duration lines.
 */
const VITEST: RunnerShape = {
  block(lines, at) {
    if (!/^ {0,12}Test Files {2}\S.*$/.test(lines[at] ?? '')) return undefined;
    const tests = /^ {0,12}Tests {2}(?:no tests|(.+) \(\d+\))$/.exec(lines[at + 1] ?? '');
    if (tests === null) return undefined;
    const parts = tests[1] === undefined ? new Map<string, number>() : countParts(tests[1].split(' | '), ['failed', 'passed', 'skipped', 'todo']);
    if (parts === undefined) return undefined;
    return { end: at + 2, counts: { runner: 'vitest', passing: n(parts, 'passed'), failing: n(parts, 'failed'), skipped: n(parts, 'skipped', 'todo') } };
  },
  trailer(after) {
    return onlyNoise(after, [/^ {0,12}Type Errors {2}\S/, /^ {0,12}Errors {2}\d+ errors?$/, /^ {0,12}Start at {2}\S/, /^ {0,12}Duration {2}\S/, /^close timed out after \d+ms$/]);
  },
};

/**
 * pytest's last line: `==== 3 failed, 10 passed, 2 skipped in 1.20s ====`
 * (without the bars under `-q`), or `no tests ran in 0.01s`. Nothing follows it.
 */
const PYTEST: RunnerShape = {
  block(lines, at) {
    const line = lines[at] ?? '';
    const m = /^(=+ )?(.+) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?( =+)?$/.exec(line);
    if (m === null || (m[1] === undefined) !== (m[3] === undefined)) return undefined;
    const text = m[2] ?? '';
    const parts = text === 'no tests ran' ? new Map<string, number>() : countParts(text.split(', '), ['failed', 'passed', 'skipped', 'deselected', 'xfailed', 'xpassed', 'warning', 'error', 'rerun']);
    if (parts === undefined) return undefined;
    return { end: at + 1, counts: { runner: 'pytest', passing: n(parts, 'passed', 'xpassed'), failing: n(parts, 'failed', 'error'), skipped: n(parts, 'skipped', 'xfailed', 'deselected') } };
  },
  trailer(after) {
    return onlyNoise(after);
  },
};

const SHAPES: readonly RunnerShape[] = [MOCHA, NODE, JEST, VITEST, PYTEST];
