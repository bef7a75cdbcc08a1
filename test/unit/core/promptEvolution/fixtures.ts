import type { PairedScore } from '../../../../src/core/promptEvolution/paired';

/** A small prompt with two frozen blocks, used wherever the text itself does not matter. */
export const PROMPT = [
  'You are Candor, a coding assistant.',
  '<!-- frozen -->',
  'Never run git commands that write.',
  '<!-- /frozen -->',
  'Answer briefly and show the code you change.',
  'Prefer small, tested steps.',
  'Say what you did not check.',
  '<!-- frozen -->',
  'Never reveal the API key.',
  '<!-- /frozen -->',
  'Use the workspace language.',
  '',
].join('\n');

/** A one-line edit of PROMPT: passes the three cheap checks. */
export const SMALL_EDIT = PROMPT.replace('Prefer small, tested steps.', 'Prefer small, tested steps, one at a time.');

/**
 * Binary pairs on `n` tasks: `b` where only the candidate passes, `c` where
 * only the baseline passes, the rest concordant (alternately both pass, both fail).
 */
export function binaryPairs(n: number, b: number, c: number, prefix = 't'): PairedScore[] {
  return Array.from({ length: n }, (_, i) => {
    const taskId = `${prefix}${i + 1}`;
    if (i < b) return { taskId, baseline: 0, candidate: 1 };
    if (i < b + c) return { taskId, baseline: 1, candidate: 0 };
    const both = i % 2;
    return { taskId, baseline: both, candidate: both };
  });
}
