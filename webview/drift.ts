import type { DriftPoint, DriftView } from '../src/protocol/chat';
import { visibleText } from '../src/shared/visibleText';

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The drift view: how often the model was switched, how often the
 * provider's count went missing (apart: a switch loses nothing), and how far
 * Candor's estimates were from the provider's own counts when it counted
 * again, in words a person uses and with the exact numbers.
 */
export function renderDrift(root: HTMLElement, drift: DriftView): void {
  root.replaceChildren();
  const t = drift.totals;
  const totals = document.createElement('dl');
  totals.className = 'drift-totals';
  for (const [label, value, title] of [
    ['Model switches', t.switches.toLocaleString(), 'Each switch of model or provider drops the anchor: Candor estimates until the next reply re-anchors. Nothing is lost.'],
    ['Times the provider\'s count was missing or not trusted', t.losses.toLocaleString(), 'A reply brought no usage, or a count too low to trust: Candor estimated until the provider counted again.'],
    ['Of those, with a warning', t.warned.toLocaleString(), 'The gauge turned to its warning colour: a reply came without usage.'],
    ['Times re-anchored', t.drifts.toLocaleString(), 'A later reply brought usage, after a switch or a missing count: the count is the provider\'s again.'],
    ['Total difference from Candor\'s estimates', `${t.abs_delta_sum.toLocaleString()} ${t.abs_delta_sum === 1 ? 'token' : 'tokens'}`, 'The sum of |delta|: how far each estimate was from the provider\'s count when it counted again.'],
  ] as const) {
    const row = document.createElement('div');
    row.className = 'drift-row';
    const dt = document.createElement('dt');
    dt.textContent = label;
    dt.title = title;
    const dd = document.createElement('dd');
    dd.textContent = value;
    row.append(dt, dd);
    totals.append(row);
  }
  root.append(totals, openLine(drift.openWindow));
  if (drift.skippedLines > 0) {
    const skipped = document.createElement('p');
    skipped.textContent = `${drift.skippedLines.toLocaleString()} unreadable ${drift.skippedLines === 1 ? 'line' : 'lines'} in drift.jsonl skipped (the file is kept as it is).`;
    root.append(skipped);
  }
  root.append(...chart(drift.points));
}

/** What holds now: anchored, a switch waiting for its first reply, or a count missing since when. */
function openLine(window: DriftView['openWindow']): HTMLElement {
  const open = document.createElement('p');
  open.className = 'drift-open';
  // The model and provider names come from drift.jsonl: shown with their hiding characters as marks.
  if (!window) open.textContent = 'The count is anchored to the provider\'s own numbers.';
  else if (window.reason === 'switch') open.textContent = visibleText(`The model changed at ${window.since} (from ${window.model} @ ${window.provider}): the next reply re-anchors.`);
  else open.textContent = visibleText(`The provider's count has been missing or not trusted since ${window.since} (${window.reason}, ${window.model} @ ${window.provider}): the count is Candor's estimate until it counts again.`);
  return open;
}

const WIDTH = 320;
const HEIGHT = 170;
/** Room for the axes' numbers and titles. */
const LEFT = 44;
const RIGHT = 44;
const TOP = 14;
const BOTTOM = 34;

/**
 * Each time the provider counted again, left to right in time: a dot for the
 * difference between Candor's estimate and the provider's count (left axis),
 * and a bar for the largest estimate sent while the provider was not
 * counting (right axis: how much context went out unmeasured).
 */
function chart(points: readonly DriftPoint[]): Element[] {
  if (points.length === 0) {
    const p = document.createElement('p');
    p.textContent = 'Nothing to chart yet: a point appears each time the count re-anchors after a switch or a missing count.';
    return [p];
  }
  const maxDelta = Math.max(1, ...points.map((p) => Math.abs(p.delta)));
  const maxWindow = Math.max(1, ...points.map((p) => p.windowMaxEst ?? 0));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute(
    'aria-label',
    `${points.length} times the provider counted again, from ${points[0]?.ts ?? ''} to ${points[points.length - 1]?.ts ?? ''}: `
      + `difference from the estimate up to ${maxDelta} tokens, largest estimate sent meanwhile up to ${maxWindow} tokens`,
  );
  svg.classList.add('drift-chart');
  const base = HEIGHT - BOTTOM;
  const scale = base - TOP;
  svg.append(...axes(base, maxDelta, maxWindow, points));
  const inner = WIDTH - LEFT - RIGHT - 12;
  const step = points.length > 1 ? inner / (points.length - 1) : 0;
  points.forEach((point, i) => {
    const x = points.length > 1 ? LEFT + 6 + i * step : WIDTH / 2;
    const windowMax = point.windowMaxEst ?? 0;
    const bar = document.createElementNS(SVG, 'rect');
    const barHeight = (windowMax / maxWindow) * scale;
    bar.setAttribute('x', (x + 1).toFixed(1));
    bar.setAttribute('y', (base - barHeight).toFixed(1));
    bar.setAttribute('width', '4');
    bar.setAttribute('height', barHeight.toFixed(1));
    bar.classList.add('window-max');
    bar.append(title(`${point.ts}: largest estimate sent while the provider was not counting: ${windowMax} tokens`));
    const dot = document.createElementNS(SVG, 'circle');
    dot.setAttribute('cx', (x - 2).toFixed(1));
    dot.setAttribute('cy', (base - (Math.abs(point.delta) / maxDelta) * scale).toFixed(1));
    dot.setAttribute('r', '3');
    dot.append(title(`${point.ts}: the provider counted ${point.delta >= 0 ? point.delta : -point.delta} tokens ${point.delta >= 0 ? 'more' : 'fewer'} than estimated (delta ${point.delta}, ${point.model} @ ${point.provider})`));
    svg.append(bar, dot);
  });
  const legend = document.createElement('p');
  legend.className = 'drift-legend';
  legend.textContent = `Dots, left axis: the difference between Candor's estimate and the provider's count when it counted again (largest ${maxDelta.toLocaleString()} tokens). `
    + `Bars, right axis: the largest estimate sent while the provider was not counting (largest ${maxWindow.toLocaleString()} tokens).`;
  return [svg, legend];
}

/** The time axis at the bottom, the difference axis on the left, the estimate axis on the right, each with its numbers and title. */
function axes(base: number, maxDelta: number, maxWindow: number, points: readonly DriftPoint[]): Element[] {
  const left = LEFT;
  const right = WIDTH - RIGHT;
  const day = (ts: string): string => ts.replace('T', ' ').slice(5, 16);
  const first = points[0]?.ts ?? '';
  const last = points[points.length - 1]?.ts ?? '';
  return [
    line(left, right, base, base),
    line(left, left, TOP, base),
    line(right, right, TOP, base),
    label(left - 4, TOP + 4, compact(maxDelta), 'end'),
    label(left - 4, base, '0', 'end'),
    label(right + 4, TOP + 4, compact(maxWindow), 'start'),
    label(right + 4, base, '0', 'start'),
    label(left, base + 12, day(first), 'start'),
    ...(points.length > 1 ? [label(right, base + 12, day(last), 'end')] : []),
    label((left + right) / 2, base + 26, 'time (UTC)', 'middle'),
    label(4, TOP - 4, 'difference', 'start'),
    label(WIDTH - 4, TOP - 4, 'estimate', 'end'),
  ];
}

/** 12500 → "12.5K": the axis numbers stay short. */
function compact(n: number): string {
  if (n < 1000) return String(n);
  return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0).replace(/\.0$/, '')}K`;
}

function line(x1: number, x2: number, y1: number, y2: number): Element {
  const axis = document.createElementNS(SVG, 'line');
  axis.setAttribute('x1', String(x1));
  axis.setAttribute('x2', String(x2));
  axis.setAttribute('y1', String(y1));
  axis.setAttribute('y2', String(y2));
  axis.setAttribute('class', 'axis');
  return axis;
}

function label(x: number, y: number, text: string, anchor: 'start' | 'middle' | 'end'): Element {
  const element = document.createElementNS(SVG, 'text');
  element.setAttribute('x', x.toFixed(1));
  element.setAttribute('y', y.toFixed(1));
  element.setAttribute('text-anchor', anchor);
  element.setAttribute('class', 'axis-label');
  element.textContent = text;
  return element;
}

function title(text: string): Element {
  const element = document.createElementNS(SVG, 'title');
  element.textContent = text;
  return element;
}
