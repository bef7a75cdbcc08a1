import type { RantView, RunView, WebviewMessage } from '../src/protocol/chat';
import { visibleLabel, visibleText } from '../src/shared/visibleText';
import { visibleNodes } from './entryParts';
import { button } from './toolkit';

/** Statuses that wait for the user or a run; the others are settled (acted, answered, routed, out of scope, dismissed). */
const OPEN: ReadonlySet<RantView['status']> = new Set(['new', 'queued', 'waiting-for-repository']);

/**
 * The rants and the evolution runs: the class and status of each complaint
 * (a confusion with its answer, a duplicate with the rant it repeats), the
 * last runs with their diffstat and gate output. Text from the data files
 * (the rant, the model's answer and summary, file names, the gate's tail)
 * shows every hiding character as a mark (docs/architecture.md, "Text bound
 * for a person").
 */
export function renderRants(root: HTMLElement, summary: HTMLElement, rants: readonly RantView[], runs: readonly RunView[], post: (m: WebviewMessage) => void): void {
  const open = rants.filter((r) => OPEN.has(r.status)).length;
  const last = runs[runs.length - 1];
  summary.textContent = `Rants: ${rants.length} (${open} open)${last ? ` · last run: ${last.outcome}` : ''}`;
  root.replaceChildren();
  const list = document.createElement('ul');
  list.className = 'rant-list';
  for (const rant of [...rants].reverse().slice(0, 50)) {
    const item = document.createElement('li');
    item.className = `rant ${rant.status}`;
    item.dataset.id = rant.id;
    const text = document.createElement('span');
    text.className = 'rant-text';
    text.append(...visibleNodes(rant.text.split('\n')[0] ?? ''));
    text.title = visibleText(rant.text, { keepLayout: true });
    const status = document.createElement('span');
    status.className = 'rant-status';
    status.textContent = visibleText([rant.class, rant.status, rant.duplicateOf ? `of ${rant.duplicateOf}` : null, rant.branch].filter(Boolean).join(' · '));
    item.append(text, status);
    if (rant.answer) {
      const answer = document.createElement('p');
      answer.className = 'rant-answer';
      answer.append(...visibleNodes(rant.answer, { keepLayout: true }));
      item.append(answer);
    }
    if (OPEN.has(rant.status)) {
      item.append(button('Dismiss', 'secondary', () => post({ type: 'dismissRant', id: rant.id }), `Dismiss rant: ${visibleLabel(rant.text.split('\n')[0] ?? '')}`));
    }
    list.append(item);
  }
  if (rants.length === 0) {
    const empty = document.createElement('p');
    empty.textContent = 'No rants yet. Candor: Rant (Ctrl+Alt+Shift+R) or /rant in the chat.';
    root.append(empty);
  } else root.append(list);

  const actions = document.createElement('div');
  actions.className = 'rant-actions';
  actions.append(button('Run Evolution', 'secondary', () => post({ type: 'runCommand', command: 'candor.evolve' })));
  root.append(actions);

  for (const run of [...runs].reverse().slice(0, 5)) {
    const details = document.createElement('details');
    details.className = `run ${run.outcome}`;
    const head = document.createElement('summary');
    head.textContent = visibleText(`${run.ts.replace('T', ' ').slice(0, 16)} · ${run.outcome}${run.branch ? ` · ${run.branch}` : ''}${run.pullRequest ? ` · #${run.pullRequest.number}${run.ci ? ` ${CI_SHORT[run.ci.state]}` : ''}` : ''}`);
    details.append(head);
    const reason = document.createElement('p');
    reason.append(...visibleNodes(run.reason, { keepLayout: true }));
    details.append(reason);
    if (run.diffstat) {
      const pre = document.createElement('pre');
      pre.append(...visibleNodes(run.diffstat, { keepLayout: true }));
      details.append(pre);
    }
    if (run.gateTail) {
      const label = document.createElement('p');
      label.textContent = `${gateVerdict(run)}; output tail${run.gateFlaky ? ' of the first failure' : ''}:`;
      const pre = document.createElement('pre');
      pre.append(...visibleNodes(run.gateTail, { keepLayout: true }));
      details.append(label, pre);
    }
    if (run.pullRequest) details.append(pullRequestLine(run.pullRequest, run.ci));
    if (run.branch && (run.outcome === 'shipped' || run.outcome === 'revert-prepared')) {
      const branch = run.branch;
      details.append(
        button('Show Diff', 'secondary', () => post({ type: 'showDiff', branch }), `Show the diff of ${branch}`),
        button('Take Branch', 'secondary', () => post({ type: 'takeBranch', branch }), `Take branch ${branch}`),
      );
      if (!run.pullRequest) details.append(button('Open Pull Request', 'secondary', () => post({ type: 'openPullRequest', branch }), `Open Pull Request for ${branch}`));
    }
    root.append(details);
  }
}

/** The run's summary line, folded: the state at a glance. */
const CI_SHORT: Record<NonNullable<RunView['ci']>['state'], string> = {
  pending: 'CI running',
  passed: 'CI passed',
  failed: 'CI failed',
  none: 'no CI',
  timeout: 'CI timed out',
};

const CI_WORDS: Record<NonNullable<RunView['ci']>['state'], string> = {
  pending: 'CI is running',
  passed: 'CI passed',
  failed: 'CI failed',
  none: 'no CI: GitHub reported no check and no status 5 minutes after the push',
  timeout: 'CI did not finish in time (candor.evolution.ciTimeoutMinutes)',
};

/** "Pull request #12 · CI failed", each part a link to GitHub. */
function pullRequestLine(pr: NonNullable<RunView['pullRequest']>, ci: RunView['ci']): HTMLElement {
  const line = document.createElement('p');
  line.className = `pull-request ci-${ci?.state ?? 'unknown'}`;
  const link = document.createElement('a');
  link.href = pr.url;
  link.textContent = `Pull request #${pr.number}`;
  line.append(link);
  if (ci) {
    line.append(' · ');
    const words = CI_WORDS[ci.state];
    if (ci.url) {
      const checks = document.createElement('a');
      checks.href = ci.url;
      checks.textContent = words;
      line.append(checks);
    } else line.append(words);
  }
  return line;
}

/** "Flaky gate" when it failed and then passed; else passed or failed, with what the runner counted (skipped tests included). */
function gateVerdict(run: RunView): string {
  const counts = run.gateCounts !== null ? ` (${run.gateCounts.passing} passing, ${run.gateCounts.failing} failing, ${run.gateCounts.skipped} skipped)` : ' (no test summary line found)';
  if (run.gateFlaky) return `Flaky gate: it failed, then passed, on the same tree${counts}`;
  return `Gate ${run.gatePassed === true ? 'passed' : 'failed'}${counts}`;
}
