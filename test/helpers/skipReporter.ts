// Mocha's spec reporter, plus the list of every skipped test with its
// reason, printed just before mocha's own summary (so that summary stays the
// last block of the output, as the evolution gate reads it). With
// `--reporter-option skips=fail` (what `npm test` passes), any skip fails the
// run: on a machine set up by `.ci/run` every precondition holds, and a test
// that skips there hides a broken set-up. See docs/architecture.md, "Tests".
import Mocha from 'mocha';
import type { SkipReasoned } from './preconditions';

interface Skipped {
  readonly title: string;
  readonly reason: string;
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

  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const reporterOptions = (options as { reporterOptions?: Record<string, unknown> } | undefined)?.reporterOptions ?? {};
    this.#failOnSkip = reporterOptions.skips === 'fail';
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test: Mocha.Test) => this.#skipped.push({ title: test.fullTitle(), reason: reasonOf(test) }));
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
    if (this.#failOnSkip && this.#skipped.length > 0) {
      console.log(`\n  ${this.#skipped.length} test(s) skipped, and this run allows none (--reporter-option skips=fail): on a machine set up by .ci/run every test runs. The list is above the summary.`);
      fn(failures + this.#skipped.length);
      return;
    }
    fn(failures);
  }
}

export default SkipReporter;
