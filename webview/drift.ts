import type { DriftView } from '../src/protocol/chat';

const SVG = 'http://www.w3.org/2000/svg';

/** Totals, the open window, and a chart of delta per closed window over time. */
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
  root.append(chart(drift));
}

function chart(drift: DriftView): Element {
  if (drift.points.length === 0) {
    const p = document.createElement('p');
    p.textContent = 'No closed loss window yet: nothing to chart.';
    return p;
  }
  const width = 300;
  const height = 120;
  const pad = 8;
  const max = Math.max(1, ...drift.points.map((p) => Math.abs(p.delta)));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `Delta per closed loss window, ${drift.points.length} points, largest |delta| ${max}`);
  svg.classList.add('drift-chart');
  const mid = height / 2;
  const axis = document.createElementNS(SVG, 'line');
  axis.setAttribute('x1', String(pad));
  axis.setAttribute('x2', String(width - pad));
  axis.setAttribute('y1', String(mid));
  axis.setAttribute('y2', String(mid));
  axis.setAttribute('class', 'axis');
  svg.append(axis);
  const step = drift.points.length > 1 ? (width - 2 * pad) / (drift.points.length - 1) : 0;
  drift.points.forEach((point, i) => {
    const x = drift.points.length > 1 ? pad + i * step : width / 2;
    const y = mid - (point.delta / max) * (mid - pad);
    const dot = document.createElementNS(SVG, 'circle');
    dot.setAttribute('cx', x.toFixed(1));
    dot.setAttribute('cy', y.toFixed(1));
    dot.setAttribute('r', '3');
    const title = document.createElementNS(SVG, 'title');
    title.textContent = `${point.ts}: delta ${point.delta} (${point.model} @ ${point.provider})`;
    dot.append(title);
    svg.append(dot);
  });
  return svg;
}
