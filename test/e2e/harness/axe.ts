// axe-core in a webview: its source is evaluated in the webview's own frame
// (a DevTools evaluation, which the page's CSP does not govern), so the
// webview's CSP stays exactly as Candor ships it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Frame } from 'playwright-core';

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary: string; html: string }>;
}

/** WCAG 2.1 A and AA. */
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

const axeSource = (): string => fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeResult {
  violations: AxeViolation[];
  /** Checks axe could not decide (an element it could not see whole, a background it could not compute). */
  incomplete: AxeViolation[];
}

/** Runs axe over the whole document of FRAME: what fails, and what it could not decide. */
export async function runAxe(frame: Frame, tags: readonly string[] = WCAG_TAGS): Promise<AxeResult> {
  const loaded = await frame.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
  if (!loaded) await frame.evaluate(axeSource());
  return frame.evaluate(async (runOnly) => {
    interface Raw { id: string; impact: string | null; help: string; nodes: Array<{ target: string[]; failureSummary?: string; html: string; any: Array<{ message: string }> }> }
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Raw[]; incomplete: Raw[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: runOnly }, resultTypes: ['violations', 'incomplete'] });
    // No named helper in here: the test runner's transform would name it with a function this page does not have.
    const [violations, incomplete] = [result.violations, result.incomplete].map((list) => list.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary ?? n.any.map((a) => a.message).join('; '), html: n.html.slice(0, 200) })),
    })));
    return { violations: violations ?? [], incomplete: incomplete ?? [] };
  }, [...tags]);
}

/** One line per failing element, for an assertion message. */
export function describeViolations(violations: readonly AxeViolation[]): string {
  return violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact ?? '?'}): ${n.target.join(' ')} — ${n.failureSummary.replace(/\s+/g, ' ')}`)).join('\n');
}

/**
 * No violation, and no contrast check left undecided: text axe could not see
 * whole (cut off, scrolled away) would otherwise pass unchecked. axe cannot
 * compute the background of SVG text: the drift chart's labels are checked
 * by their colour instead (accessibility.test.ts).
 */
export function assertAxeClean(result: AxeResult, where: string): void {
  assert.equal(result.violations.length, 0, `${where}:\n${describeViolations(result.violations)}`);
  const undecided = result.incomplete
    .filter((v) => v.id === 'color-contrast')
    .map((v) => ({ ...v, nodes: v.nodes.filter((n) => !n.target.join(' ').startsWith('text[')) }))
    .filter((v) => v.nodes.length > 0);
  assert.equal(undecided.length, 0, `${where}, contrast not decided:\n${describeViolations(undecided)}`);
}
