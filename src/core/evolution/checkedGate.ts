import type { GateCounts } from './gateSummary';
import type { GateResult } from './testGate';

/**
 * A gate that knows when it is flaky (docs/architecture.md, "Evolution"):
 * a failure is run once more on the same tree, and a second run that passes
 * makes the result flaky, never a pass. The re-run costs time only after a
 * failure, and at most once.
 */

export interface CheckedGate {
  /** The run whose verdict counts: the first failure when the gate is flaky. */
  readonly result: GateResult;
  /** It failed, then passed, on the same tree. */
  readonly flaky: boolean;
  /** Total time of both runs. */
  readonly ms: number;
  /** What the test runner's own summary line says, when it has one. */
  readonly counts?: GateCounts;
}

export interface CheckedGateOptions {
  /** `candor.evolution.rerunFailedGate`. */
  readonly rerun: boolean;
  readonly print: (line: string) => void;
}

/** The reason of a discarded change whose gate is flaky. */
export const FLAKY_CHANGE = 'the gate is flaky: it failed, then passed, on the same change';

export async function runCheckedGate(gate: () => Promise<GateResult>, options: CheckedGateOptions): Promise<CheckedGate> {
  const first = await gate();
  if (first.passed || !worthRerun(first, options)) return checked(first, false, first.ms);
  options.print('the gate failed: running it once more on the same tree, to tell a flaky test from a broken change');
  const second = await gate();
  const ms = first.ms + second.ms;
  if (second.cancelled) return checked(second, false, ms);
  // Failed, then passed: the verdict is the failure, kept with its own tail.
  return second.passed ? checked(first, true, ms) : checked(second, false, ms);
}

/** A cancelled run, a command that could not start, or a failed setup says nothing about flakiness. */
function worthRerun(result: GateResult, options: CheckedGateOptions): boolean {
  return options.rerun && !result.cancelled && !result.crashed && result.failedStep !== 'setup';
}

function checked(result: GateResult, flaky: boolean, ms: number): CheckedGate {
  return result.counts !== undefined ? { result, flaky, ms, counts: result.counts } : { result, flaky, ms };
}

/**
 * What the gate ran, for people: `, 676 passing, 107 skipped`, or a plain
 * note when the runner printed no summary line (never a guess).
 */
export function describeCounts(gate: CheckedGate): string {
  if (gate.counts === undefined) return gate.result.failedStep === 'build' ? '' : ' (no test summary line found: the counts are unknown)';
  const { passing, failing, skipped } = gate.counts;
  return `: ${passing} passing, ${failing} failing, ${skipped} skipped`;
}
