// Mocha's spec reporter, plus the list of every skipped test with its
// reason, printed just before mocha's own summary (so that summary stays the
// last block of the output, as the evolution gate reads it). With
// `--reporter-option skips=fail` (what `npm test` passes), any skip fails the
// run: on a machine set up by `.ci/run` every precondition holds, and a test
// that skips there hides a broken set-up. With `--reporter-option
// summary=FILE` it also writes the counts and the files of the skipped tests
// as JSON (the gateSuite bench reads it). See docs/architecture.md, "Tests".
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import type { SkipReasoned } from './preconditions';

interface Skipped {
  readonly title: string;
  readonly reason: string;
  readonly file: string | undefined;
}

/** What `summary=FILE` writes. */
export interface SuiteSummary {
  readonly passing: number;
  readonly pending: number;
  readonly failing: number;
  /** The test files (relative to the folder mocha ran in) that hold a skipped test. */
  readonly filesWithSkips: readonly string[];
  /** The test files that hold a failed test or hook. */
  readonly filesWithFailures: readonly string[];
}

/** The reason kept by skipUnless, on the test or on the nearest suite a hook skipped. */
function reasonOf(test: Mocha.Test): string {
  for (let at: (Mocha.Runnable | Mocha.Suite) | undefined = test; at !== undefined; at = at.parent) {
    const reason = (at as SkipReasoned).skipReason;
    if (reason !== undefined) return reason;
  }
  return test.fn === undefined ? 'written as it.skip, or without a body' : 'no reason given (this.skip() without skipUnless)';
}

class SkipReporter extends Mocha.reporters.Spec {
  readonly #skipped: Skipped[] = [];
  readonly #failOnSkip: boolean;
  readonly #summaryFile: string | undefined;
  readonly #failedFiles = new Set<string>();

  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const reporterOptions = (options as { reporterOptions?: Record<string, unknown> } | undefined)?.reporterOptions ?? {};
    this.#failOnSkip = reporterOptions.skips === 'fail';
    this.#summaryFile = typeof reporterOptions.summary === 'string' ? reporterOptions.summary : undefined;
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test: Mocha.Runnable) => this.#failedFiles.add(test.file ?? '(unknown)'));
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test: Mocha.Test) => this.#skipped.push({ title: test.fullTitle(), reason: reasonOf(test), file: test.file }));
  }

  override epilogue(): void {
    if (this.#skipped.length > 0) {
      console.log(`\n  skipped (${this.#skipped.length}), each with its reason:`);
      for (const { title, reason } of this.#skipped) console.log(`    - ${title}\n        ${reason}`);
    }
    super.epilogue();
  }

  /** Mocha calls this with the failure count that becomes the exit code. */
  override done(failures: number, fn: (failures: number) => void): void {
    if (this.#summaryFile !== undefined) this.#writeSummary(this.#summaryFile);
    if (this.#failOnSkip && this.#skipped.length > 0) {
      console.log(`\n  ${this.#skipped.length} test(s) skipped, and this run allows none (--reporter-option skips=fail): on a machine set up by .ci/run every test runs. The list is above the summary.`);
      fn(failures + this.#skipped.length);
      return;
    }
    fn(failures);
  }

  #writeSummary(file: string): void {
    const stats = this.stats;
    const relative = (file: string | undefined): string => (file !== undefined ? path.relative(process.cwd(), file) : '(unknown)');
    const skipping = new Set(this.#skipped.map((s) => relative(s.file)));
    const failing = new Set([...this.#failedFiles].map(relative));
    const summary: SuiteSummary = { passing: stats.passes, pending: stats.pending, failing: stats.failures, filesWithSkips: [...skipping].sort(), filesWithFailures: [...failing].sort() };
    fs.writeFileSync(file, `${JSON.stringify(summary)}\n`);
  }
}

export default SkipReporter;
