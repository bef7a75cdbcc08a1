// The "Candor: Prompt Evolution" panel: renders the review state the host
// posts. Every string from the host (prompt text in diffs, rationales written
// by a model) goes into the page as text, never as HTML.
import type {
  CandidateView, CheckView, DiffHunk, NearMissView, ReviewHostMessage, ReviewState, ReviewWebviewMessage, RunView, StatsView, VersionView,
} from '../src/protocol/review';

interface VsCodeApi {
  postMessage(message: ReviewWebviewMessage): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const $ = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;

type Child = Node | string | undefined | false;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  for (const child of children) {
    if (child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

function button(label: string, onClick: () => void, accessibleName = label): HTMLButtonElement {
  const b = el('button', { type: 'button', 'aria-label': accessibleName, title: accessibleName }, label);
  b.addEventListener('click', onClick);
  return b;
}

const number = (x: number): string => {
  if (!Number.isFinite(x)) return String(x);
  if (x !== 0 && Math.abs(x) < 1e-4) return x.toExponential(3).replace(/\.?0+e/, 'e');
  return String(Number(x.toPrecision(4)));
};
const signed = (x: number): string => `${x > 0 ? '+' : ''}${x.toFixed(3)}`;

$('actions').append(button('Refresh', () => vscode.postMessage({ type: 'refresh' })));

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const message = event.data as ReviewHostMessage | undefined;
  if (message?.type === 'state') render(message.state);
});
vscode.postMessage({ type: 'ready' });

function render(state: ReviewState): void {
  $('prompt-source').textContent = state.prompt.source === 'workspace'
    ? `Prompt in force: .candor/prompt.md${state.prompt.version ? ` (${labelOf(state, state.prompt.version)})` : ''}${state.running ? ' · a run is going' : ''}`
    : `Prompt in force: built in (no .candor/prompt.md yet)${state.running ? ' · a run is going' : ''}`;
  const error = $('error');
  error.hidden = !state.error;
  error.textContent = state.error ?? '';
  $('last-run').replaceChildren(...lastRun(state.lastRun));
  $('queue').replaceChildren(...queue(state));
  $('versions').replaceChildren(...versions(state));
}

function lastRun(run: RunView | undefined): Node[] {
  if (!run) return [el('h2', {}, 'Last run'), el('p', { class: 'muted' }, 'No run in this window yet. Run "Candor: Run Prompt Evolution".')];
  return [
    el('h2', {}, 'Last run'),
    el('p', { class: `outcome outcome-${run.outcome}` }, run.summary),
    el('p', { class: 'muted' }, `${run.finished} · ${run.model} · ${run.tasks} tasks · task set ${run.taskSetHash.slice(0, 12)}`),
    ...run.candidates.map(candidate),
  ];
}

function candidate(view: CandidateView): Node {
  const verdict = view.verdict === 'pass' ? 'passed all six checks' : view.verdict === 'near-miss' ? `near-miss (${view.failed ?? '?'})` : `rejected by ${view.failed ?? '?'}`;
  return el('article', { class: `candidate verdict-${view.verdict}`, 'data-candidate': view.id, 'aria-label': `Candidate ${view.id}` },
    el('h3', {}, `${view.id} — `, el('span', { class: 'verdict' }, verdict)),
    view.rationale ? el('p', { class: 'rationale' }, view.rationale) : undefined,
    view.stats ? stats(view.stats) : undefined,
    checks(view.checks),
    diff(view.diff),
  );
}

function checks(list: readonly CheckView[]): Node {
  const head = el('tr', {}, el('th', { scope: 'col' }, ''), el('th', { scope: 'col' }, 'Check'), el('th', { scope: 'col' }, 'Value'), el('th', { scope: 'col' }, 'Rule'), el('th', { scope: 'col' }, 'Detail'));
  const rows = list.map((c) => {
    const state = c.passed === undefined ? 'not-run' : c.passed ? 'passed' : 'failed';
    const mark = c.passed === undefined ? '·' : c.passed ? '✓' : '✗';
    return el('tr', { class: `check check-${state}`, 'data-check': c.name },
      el('td', { 'aria-label': state.replace('-', ' ') }, mark),
      el('td', {}, c.name),
      el('td', {}, c.value),
      el('td', {}, c.threshold),
      el('td', {}, c.detail ?? ''));
  });
  return el('table', { class: 'checks' }, el('thead', {}, head), el('tbody', {}, ...rows));
}

function stats(s: StatsView): Node {
  return el('p', { class: 'stats' }, `N=${s.n} · b=${s.b} (candidate ahead) · c=${s.c} (baseline ahead) · effect ${signed(s.effect)} · p=${number(s.p)} · adjusted α=${number(s.adjustedAlpha)}`);
}

function diff(hunks: readonly DiffHunk[]): Node {
  if (hunks.length === 0) return el('p', { class: 'muted' }, 'No textual change.');
  const pre = el('pre', { class: 'diff', 'aria-label': 'Unified diff' });
  for (const hunk of hunks) {
    pre.append(el('span', { class: 'hunk' }, `${hunk.header}\n`));
    for (const line of hunk.lines) {
      const mark = line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : line.kind === 'note' ? '' : ' ';
      pre.append(el('span', { class: line.kind }, `${mark}${line.text}\n`));
    }
  }
  return pre;
}

function queue(state: ReviewState): Node[] {
  const head = el('h2', {}, 'Review queue');
  if (state.queue.length === 0) return [head, el('p', { class: 'muted' }, 'No near-misses waiting.')];
  return [
    head,
    el('p', { class: 'muted' }, 'Candidates that were ahead but fell short of the sample floor, the effect size or the confidence. A re-test uses only tasks the candidate has not been scored on, counts as another hypothesis, and replaces the numbers shown. Promote Anyway overrides the gate (recorded as your decision; frozen blocks must still match); Dismiss drops the candidate.'),
    ...state.queue.map((item) => nearMiss(item, state.running)),
  ];
}

function nearMiss(item: NearMissView, running: boolean): Node {
  const retest = button('Re-test', () => vscode.postMessage({ type: 'retest', candidateId: item.candidateId }), `Re-test ${item.candidateId}`);
  const promote = button('Promote Anyway', () => vscode.postMessage({ type: 'promoteAnyway', candidateId: item.candidateId }), `Promote ${item.candidateId} anyway`);
  const dismiss = button('Dismiss', () => vscode.postMessage({ type: 'dismiss', candidateId: item.candidateId }), `Dismiss ${item.candidateId}`);
  for (const b of [retest, promote, dismiss]) b.disabled = running;
  // Promoting over the gate needs the candidate to have been tested against the prompt in force.
  if (item.stale) promote.disabled = true;
  return el('article', { class: 'candidate verdict-near-miss', 'data-candidate': item.candidateId, 'aria-label': `Near-miss ${item.candidateId}` },
    el('h3', {}, `${item.candidateId} — near-miss (${item.failed ?? '?'})`),
    el('p', { class: 'muted' }, `${item.ts}${item.stale ? ' · tested against an older prompt' : ''}`),
    item.stats ? stats(item.stats) : undefined,
    checks(item.checks),
    diff(item.diff),
    el('div', { class: 'row' }, retest, promote, dismiss),
  );
}

function versions(state: ReviewState): Node[] {
  const head = el('h2', {}, 'Prompt history');
  if (state.versions.length === 0) return [head, el('p', { class: 'muted' }, 'No versions recorded yet.')];
  return [head, ...state.versions.map((v) => version(v, state))];
}

function version(v: VersionView, state: ReviewState): Node {
  const parent = v.parent ? labelOf(state, v.parent) : undefined;
  const where = v.kind === 'promotion' ? `${v.lineage?.humanOverride ? 'promoted anyway by you' : 'promotion'} of ${parent ?? '?'}`
    : v.kind === 'rollback' ? `rollback to ${v.restores ? labelOf(state, v.restores) : '?'}`
    : parent ? `root (a hand edit after ${parent})` : 'root';
  const override = v.lineage?.humanOverride;
  const lineage = v.lineage
    ? el('p', { class: 'stats' }, `${override ? `human override (the gate stopped it at ${override.failedCheck}) · ` : ''}N=${v.lineage.n} · b=${v.lineage.b} · c=${v.lineage.c} · effect ${signed(v.lineage.effect)} · p=${number(v.lineage.p)} · adjusted α=${number(v.lineage.adjustedAlpha)} · edit ${v.lineage.editDistance} line(s) · drift ${v.lineage.drift.toFixed(3)} · model ${v.lineage.model} · task set ${v.lineage.taskSetHash.slice(0, 12)}`)
    : undefined;
  const restore = v.inForce ? undefined : button('Restore', () => vscode.postMessage({ type: 'restore', versionId: v.id }), `Restore ${v.label}`);
  const details = el('details', {}, el('summary', {}, 'Diff against its parent'), diff(v.diff));
  return el('article', { class: `version kind-${v.kind}${v.inForce ? ' in-force' : ''}`, 'data-version': v.id, 'aria-label': `Version ${v.label}` },
    el('h3', {}, `${v.label} — ${where}${v.inForce ? ' (in force)' : ''}`),
    el('p', { class: 'muted' }, `${v.created} · root ${labelOf(state, v.root)}`),
    lineage,
    v.diff.length > 0 ? details : undefined,
    restore ? el('div', { class: 'row' }, restore) : undefined,
  );
}

function labelOf(state: ReviewState, id: string): string {
  return state.versions.find((v) => v.id === id)?.label ?? id;
}
