/** What the status bar and the chat show about the context. */
export interface GaugeState {
  readonly projected: number;
  readonly window: number;
  readonly thresholdPercent: number;
  readonly anchored: boolean;
  /** A loss window warns (after a no-usage loss, until re-anchored). */
  readonly warning: boolean;
  readonly estimate: number;
  readonly anchor?: { readonly real: number; readonly est: number; readonly model: string; readonly provider: string };
  readonly totals?: { readonly windows: number; readonly warned: number; readonly drifts: number; readonly abs_delta_sum: number };
}

export function percentOf(state: GaugeState): number {
  return state.window > 0 ? Math.round((state.projected / state.window) * 100) : 0;
}

/** 47213 → "47.2K", 128000 → "128K", 950 → "950". */
export function compactNumber(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) {
    const k = n / 1000;
    return `${k >= 100 || Number.isInteger(k) ? Math.round(k) : k.toFixed(1).replace(/\.0$/, '')}K`;
  }
  const m = n / 1_000_000;
  return `${Number.isInteger(m) ? m : m.toFixed(1).replace(/\.0$/, '')}M`;
}

/** The status bar text of the contract: `$(pulse) 37% 47.2K/128K`. */
export function gaugeText(state: GaugeState): string {
  return `$(pulse) ${percentOf(state)}% ${compactNumber(state.projected)}/${compactNumber(state.window)}`;
}

export function gaugeAccessibilityLabel(state: GaugeState): string {
  const how = state.anchored ? 'anchored' : 'estimated';
  const warn = state.warning ? ', warning: the provider stopped reporting usage' : '';
  return `Candor context ${percentOf(state)} percent, ${state.projected} of ${state.window} tokens, ${how}${warn}`;
}

export function gaugeTooltip(state: GaugeState): string {
  const lines = [
    `Context: ${state.projected.toLocaleString('en-US')} of ${state.window.toLocaleString('en-US')} tokens (${state.anchored ? 'anchored' : 'estimated'})`,
    state.anchor
      ? `Anchor: ${state.anchor.real.toLocaleString('en-US')} real (est ${state.anchor.est.toLocaleString('en-US')}) from ${state.anchor.model} @ ${state.anchor.provider}`
      : 'Anchor: none',
    `Estimate now: ${state.estimate.toLocaleString('en-US')}`,
    `Compaction threshold: ${state.thresholdPercent}%`,
  ];
  if (state.warning) lines.push('Warning: the provider stopped reporting usage — the count is an estimate.');
  if (state.totals) {
    const t = state.totals;
    lines.push(`Drift: ${t.windows} loss windows, ${t.warned} warned, ${t.drifts} re-anchored, |delta| sum ${t.abs_delta_sum.toLocaleString('en-US')}`);
  }
  lines.push('Click to open the drift view.');
  return lines.join('\n');
}
