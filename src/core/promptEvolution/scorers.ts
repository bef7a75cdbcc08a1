import { isDeepStrictEqual } from 'node:util';
import type { TextModel } from '../provider/chatModel';
import { extractJson, isRecord } from '../text';
import type { EvalTask } from './taskSet';

/** A task's score on the 0..1 scale; `note` says why a reply got 0 for a reason other than being wrong. */
export interface Score {
  readonly score: number;
  readonly note?: string;
}

export interface ScoreOptions {
  /** The model that grades `judge` tasks. */
  readonly judge?: TextModel;
  readonly signal?: AbortSignal;
}

export async function scoreReply(task: EvalTask, reply: string, options: ScoreOptions = {}): Promise<Score> {
  switch (task.scorer) {
    case 'exact':
      return exactScore(task.expected, reply);
    case 'json':
      return jsonScore(task.expected, reply);
    case 'judge':
      if (!options.judge) return { score: 0, note: 'no judge model' };
      return judgeScore(task, reply, options.judge, options.signal);
  }
}

/** 1 when the trimmed reply equals the trimmed expectation, else 0. */
export function exactScore(expected: unknown, reply: string): Score {
  return { score: String(expected).trim() === reply.trim() ? 1 : 0 };
}

/** The fraction of the expected top-level fields present and deep-equal in the JSON object of the reply. */
export function jsonScore(expected: unknown, reply: string): Score {
  if (!isRecord(expected)) return { score: 0, note: 'the task has no expected object' };
  const found = extractJson(reply, 'object');
  if (!isRecord(found)) return { score: 0, note: 'no JSON object in the reply' };
  const keys = Object.keys(expected);
  const equal = keys.filter((key) => Object.hasOwn(found, key) && isDeepStrictEqual(found[key], expected[key])).length;
  return { score: equal / keys.length };
}

const JUDGE_SYSTEM =
  'You grade one answer against a rubric. Reply with a single number from 0 to 1, where 1 means the answer fully meets the rubric and 0 means it does not meet it at all. No other text.';

/** Asks the judge model; a reply without a number in 0..1 scores 0 with a note. */
export async function judgeScore(task: EvalTask, reply: string, judge: TextModel, signal?: AbortSignal): Promise<Score> {
  const reference = task.expected === undefined || task.expected === null ? '' : `\n\nReference answer:\n${typeof task.expected === 'string' ? task.expected : JSON.stringify(task.expected)}`;
  const verdict = await judge.complete(
    [
      { role: 'system', content: JUDGE_SYSTEM },
      { role: 'user', content: `Rubric:\n${task.rubric ?? ''}\n\nTask:\n${task.input}${reference}\n\nAnswer to grade:\n${reply}` },
    ],
    signal,
  );
  return parseJudgeScore(verdict);
}

export function parseJudgeScore(verdict: string): Score {
  const match = /-?\d+(?:\.\d+)?|-?\.\d+/.exec(verdict);
  if (!match) return { score: 0, note: `unparseable judge reply: ${preview(verdict)}` };
  const value = Number(match[0]);
  if (!(value >= 0 && value <= 1)) return { score: 0, note: `judge score out of 0..1: ${match[0]}` };
  return { score: value };
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 60)}…` : flat;
}
