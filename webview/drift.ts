import type { DriftPoint, DriftView } from '../src/protocol/chat';

const SVG = 'http://www.w3.org/2000/svg';

/** Totals, the open window, and a chart of |delta| and the window's maximum per closed window over time. */
export function renderDrift(root: HTMLElement, drift: DriftView): void {
  root.replaceChildren();
  const t = drift.totals;
  const totals = document.createElement('dl');
  totals.className = 'drift-totals';
  for (const [label, value] of [
    ['Loss windows', t.windows],
    ['Warned', t.warned],
    ['Re-anchored (drifts)', t.drifts],
    ['Sum of |delta|', t.abs_delta_sum],
  ] as const) {
    const dt = document.createElement('dt');
    dt.textContent = label;
    const dd = document.createElement('dd');
    dd.textContent = value.toLocaleString();
    totals.append(dt, dd);
  }
  root.append(totals);

  const open = document.createElement('p');
  open.className = 'drift-open';
  open.textContent = drift.openWindow
    ? `Open window since ${drift.openWindow.since}: ${drift.openWindow.reason} (${drift.openWindow.model} @ ${drift.openWindow.provider}).`
    : 'No open loss window: the count is anchored to the provider.';
  root.append(open);
  if (drift.skippedLines > 0) {
    const skipped = document.createElement('p');
    skipped.textContent = `${drift.skippedLines} unreadable line(s) in drift.jsonl were skipped (the file is kept as it is).`;
    root.append(skipped);
  }
  root.append(...chart(drift.points));
}

/**
 * Per closed window, left to right in time: a dot for |delta| (how far the
 * estimate was from the provider's count when it re-anchored) and, beside it,
 * a bar for the largest estimate sent while the window was open (how much
 * context went out unmeasured). Each series has its own scale, given in the
 * legend.
 */
function chart(points: readonly DriftPoint[]): Element[] {
  if (points.length === 0) {
    const p = document.createElement('p');
    p.textContent = 'No closed loss window yet: nothing to chart.';
    return [p];
  }
  const width = 300;
  const height = 120;
  const pad = 8;
  const maxDelta = Math.max(1, ...points.map((p) => Math.abs(p.delta)));
  const maxWindow = Math.max(1, ...points.map((p) => p.windowMaxEst ?? 0));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute(
    'aria-label',
    `Per closed loss window, ${points.length} points: |delta| (largest ${maxDelta} tokens) and the window's largest estimate (largest ${maxWindow} tokens)`,
  );
  svg.classList.add('drift-chart');
  const base = height - pad;
  svg.append(line(pad, width - pad, base, base));
  const step = points.length > 1 ? (width - 2 * pad - 12) / (points.length - 1) : 0;
  const scale = height - 2 * pad;
  points.forEach((point, i) => {
    const x = points.length > 1 ? pad + 6 + i * step : width / 2;
    const windowMax = point.windowMaxEst ?? 0;
    const bar = document.createElementNS(SVG, 'rect');
    const barHeight = (windowMax / maxWindow) * scale;
    bar.setAttribute('x', (x + 1).toFixed(1));
    bar.setAttribute('y', (base - barHeight).toFixed(1));
    bar.setAttribute('width', '4');
    bar.setAttribute('height', barHeight.toFixed(1));
    bar.classList.add('window-max');
    bar.style.setProperty('fill', 'var(--vscode-charts-blue, var(--vscode-descriptionForeground))');
    bar.append(title(`${point.ts}: largest estimate sent while the window was open ${windowMax} tokens`));
    const dot = document.createElementNS(SVG, 'circle');
    dot.setAttribute('cx', (x - 2).toFixed(1));
    dot.setAttribute('cy', (base - (Math.abs(point.delta) / maxDelta) * scale).toFixed(1));
    dot.setAttribute('r', '3');
    dot.append(title(`${point.ts}: delta ${point.delta} (${point.model} @ ${point.provider})`));
    svg.append(bar, dot);
  });
  const legend = document.createElement('p');
  legend.className = 'drift-legend';
  legend.textContent = `Dots: |delta| at re-anchoring (largest ${maxDelta.toLocaleString()} tokens). Bars: the largest estimate sent while the window was open (largest ${maxWindow.toLocaleString()} tokens).`;
  return [svg, legend];
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

function title(text: string): Element {
  const element = document.createElementNS(SVG, 'title');
  element.textContent = text;
  return element;
}
