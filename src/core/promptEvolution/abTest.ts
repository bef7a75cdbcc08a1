import type { ChatMessage } from '../messages';
import type { TextModel } from '../provider/chatModel';
import type { PairedScore } from './paired';
import { scoreReply } from './scorers';
import { Semaphore } from './semaphore';
import type { EvalTask } from './taskSet';
import { errorMessage } from '../errorMessage';

/**
 * The paired A/B test: the baseline and every candidate answer the same
 * tasks in one batch, through the same model with the same settings,
 * interleaved task by task so that a provider slowing down or changing
 * mid-run hits every arm alike.
 */

export interface AbCandidate {
  readonly id: string;
  readonly text: string;
}

export interface AbProgress {
  readonly done: number;
  readonly total: number;
  readonly failed: number;
}

export interface AbTestInput {
  readonly model: TextModel;
  /** Grades `judge` tasks; default: `model`. */
  readonly judge?: TextModel;
  readonly tasks: readonly EvalTask[];
  readonly baseline: string;
  readonly candidates: readonly AbCandidate[];
  /** Per candidate id, tasks it was already scored on: a re-test runs only on the others. */
  readonly alreadyScored?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Requests in flight (default 4). */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: AbProgress) => void;
}

/** One arm's request that failed: its task is left out of that candidate's pairs (or all, for the baseline). */
export interface AbFailure {
  readonly taskId: string;
  readonly arm: string;
  readonly message: string;
}

export interface AbNote {
  readonly taskId: string;
  readonly arm: string;
  readonly note: string;
}

export const BASELINE_ARM = 'baseline';

export type AbTestResult =
  | {
      readonly kind: 'done';
      /** Per candidate id, its paired scores against the baseline. */
      readonly pairs: ReadonlyMap<string, readonly PairedScore[]>;
      readonly failures: readonly AbFailure[];
      readonly notes: readonly AbNote[];
      /** Arm runs made (each is one request, plus one per judged task). */
      readonly runs: number;
    }
  | { readonly kind: 'cancelled'; readonly done: number; readonly total: number };

interface Job {
  readonly task: EvalTask;
  readonly arm: string;
  readonly prompt: string;
}

export async function runAbTest(input: AbTestInput): Promise<AbTestResult> {
  const jobs = planJobs(input);
  const semaphore = new Semaphore(input.concurrency ?? 4);
  const scores = new Map<string, Map<string, number>>(); // arm → task → score
  const failures: AbFailure[] = [];
  const notes: AbNote[] = [];
  let done = 0;

  const runJob = async (job: Job): Promise<void> => {
    await semaphore.run(async () => {
      if (input.signal?.aborted) return;
      try {
        const messages: ChatMessage[] = [
          { role: 'system', content: job.prompt },
          { role: 'user', content: job.task.input },
        ];
        const reply = await input.model.complete(messages, input.signal);
        const score = await scoreReply(job.task, reply, { judge: input.judge ?? input.model, signal: input.signal });
        if (score.note) notes.push({ taskId: job.task.id, arm: job.arm, note: score.note });
        let arm = scores.get(job.arm);
        if (!arm) scores.set(job.arm, (arm = new Map()));
        arm.set(job.task.id, score.score);
      } catch (err) {
        if (input.signal?.aborted) return;
        failures.push({ taskId: job.task.id, arm: job.arm, message: errorMessage(err) });
      }
      done++;
      input.onProgress?.({ done, total: jobs.length, failed: failures.length });
    });
  };

  await Promise.all(jobs.map(runJob));
  if (input.signal?.aborted) return { kind: 'cancelled', done, total: jobs.length };

  const baseline = scores.get(BASELINE_ARM) ?? new Map<string, number>();
  const pairs = new Map<string, PairedScore[]>();
  for (const candidate of input.candidates) {
    const own = scores.get(candidate.id) ?? new Map<string, number>();
    const list: PairedScore[] = [];
    for (const task of input.tasks) {
      const b = baseline.get(task.id);
      const c = own.get(task.id);
      if (b !== undefined && c !== undefined) list.push({ taskId: task.id, baseline: b, candidate: c });
    }
    pairs.set(candidate.id, list);
  }
  return { kind: 'done', pairs, failures, notes, runs: jobs.length };
}

/** Task by task: the baseline, then each candidate that has not been scored on that task. */
function planJobs(input: AbTestInput): Job[] {
  const ids = new Set<string>();
  for (const candidate of input.candidates) {
    if (candidate.id === BASELINE_ARM || ids.has(candidate.id)) throw new Error(`candidate id "${candidate.id}" is reserved or repeated`);
    ids.add(candidate.id);
  }
  const jobs: Job[] = [];
  for (const task of input.tasks) {
    const arms = input.candidates.filter((c) => !input.alreadyScored?.get(c.id)?.has(task.id));
    if (arms.length === 0) continue;
    jobs.push({ task, arm: BASELINE_ARM, prompt: input.baseline });
    for (const arm of arms) jobs.push({ task, arm: arm.id, prompt: arm.text });
  }
  return jobs;
}
