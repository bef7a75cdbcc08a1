import { errorMessage } from '../errorMessage';
import type { Logger } from '../log';
import { LockBusyError } from '../process/lockFile';
import { RequestError } from '../provider/requestError';
import type { CheckedGate } from './checkedGate';
import { isEvolutionError } from './errors';
import type { EvolutionPhase } from './options';
import type { EvolutionOutcome, GateSummary } from './record';
import type { GateResult } from './testGate';
import { isKindError } from '../kindError';

/** How an evolution run ended, before it becomes its record (docs/architecture.md, "Evolution"). */
export interface Ending {
  readonly outcome: EvolutionOutcome;
  readonly reason: string;
  readonly rants?: readonly string[];
  readonly branch?: string;
  readonly commit?: string;
  readonly diffstat?: string;
  readonly gate?: GateResult;
  /** Set when the gate was checked for flakiness (HEAD's and the change's gates). */
  readonly checked?: CheckedGate;
}

/** The record's `gate`: the verdict, its tail, and what the runner's summary line counted. */
export function gateSummary(ending: Ending): GateSummary | null {
  if (ending.gate === undefined) return null;
  const { passed, ms, tail } = ending.gate;
  const checked = ending.checked;
  if (checked === undefined) return { passed, ms, tail };
  return {
    passed: passed && !checked.flaky,
    ms: checked.ms,
    tail,
    ...(checked.flaky ? { flaky: true } : {}),
    ...(checked.counts !== undefined ? { passing: checked.counts.passing, failing: checked.counts.failing, skipped: checked.counts.skipped } : {}),
  };
}

/** The ending of a run that threw: an `error` record with a reason for people, or `discarded` when the user cancelled. */
export function failureEnding(err: unknown, at: { readonly phase: EvolutionPhase; readonly cancelled: boolean; readonly cloned: boolean; readonly log?: Logger }): Ending {
  if (isEvolutionError(err, 'refused')) return { outcome: 'error', reason: err.message };
  if (isEvolutionError(err, 'cancelled') || at.cancelled) {
    return { outcome: 'discarded', reason: `cancelled by the user during ${at.phase}${at.cloned ? '; the clone is restored' : ''}` };
  }
  if (isKindError(err, LockBusyError)) return { outcome: 'error', reason: err.message };
  if (isKindError(err, RequestError)) return { outcome: 'error', reason: `the model request failed during ${at.phase}: ${err.kind}${err.status !== undefined ? ` ${err.status}` : ''} — ${err.message}` };
  const message = errorMessage(err);
  at.log?.error(`evolution run failed during ${at.phase}: ${err instanceof Error && err.stack ? err.stack : message}`);
  return { outcome: 'error', reason: `failed during ${at.phase}: ${message}` };
}

/**
 * What triage did, in a line: `3 rant(s) routed (2 agent-code, 1 confusion); 1 left new, …`.
 * The offline demo answers from a script and cannot sort rants: the line says so instead of "left new" with no reason.
 */
export function triageLine(decisions: ReadonlyArray<{ readonly class?: string | null }>, left: number, offline: boolean): string {
  const counts = new Map<string, number>();
  for (const d of decisions) counts.set(d.class ?? 'none', (counts.get(d.class ?? 'none') ?? 0) + 1);
  const routed = [...counts].map(([cls, n]) => `${n} ${cls}`).join(', ');
  const leftNew = offline && left > 0
    ? `the offline demo gives scripted replies and cannot sort rants: ${left} left new. Set candor.baseUrl and candor.model to a real model, then run evolution again`
    : `${left} left new, to be asked again on the next run`;
  return `${decisions.length} rant(s) routed${routed !== '' ? ` (${routed})` : ''}; ${leftNew}`;
}
