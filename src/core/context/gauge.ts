import type { DriftSummary } from './driftEvents';
import type { EstimatorKind } from './estimator';
import type { AnchorChange } from './gateState';
import type { CountSource, GateProjection } from './gate';
import type { UnanchoredReason, WarningKind } from './transitions';
import { shortModelName } from '../provider/modelName';
import { plural } from '../text';

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
  readonly totals?: DriftSummary;
  /** Where `window` came from: the user's `candor.contextWindow`, the local server's report, or the default. */
  readonly windowSource?: 'settings' | 'server' | 'default';
  /** The other of the two windows, when the user's setting and the server's window differ (the tooltip names both). */
  readonly windowOther?: { readonly setting: number; readonly server: number };
  /** What counted the estimate: the model's tokenizer, or the heuristic (calibrated or not). */
  readonly estimator?: { readonly kind: EstimatorKind; readonly name: string; readonly pending: number };
  /** Why the count is an estimate. */
  readonly unanchoredBecause?: UnanchoredReason;
  readonly warningKind?: WarningKind;
  /** The payload shrank under the anchor: when, by how much, and why. */
  readonly change?: AnchorChange;
  /** What the tool definitions take of every request, and each MCP server's part of it. */
  readonly tools?: ToolShare;
  /** Where the number comes from, and the half-width of its band in tokens (0: exact); see bandLabel. */
  readonly source?: CountSource;
  readonly band?: number;
  /** The family whose tokenizer counted it (`tokenizer`): "Qwen3". */
  readonly family?: string;
}

/** The tool definitions' tokens (counted when the list changes, never per request). */
export interface ToolShare {
  readonly count: number;
  readonly tokens: number;
  /** Each MCP server's definitions, largest first. */
  readonly servers: readonly { readonly name: string; readonly tools: number; readonly tokens: number }[];
}

/** Past this share of the window, the tool definitions alone are said to crowd the context. */
export const TOOLS_CROWD_PERCENT = 25;

/** The gauge for a projection, with the window in use and the drift totals. */
export function gaugeOf(
  projection: GateProjection,
  settings: { readonly contextWindow: number; readonly windowSource?: GaugeState['windowSource']; readonly serverWindow?: number; readonly windowSetting?: number; readonly thresholdPercent: number },
  totals: DriftSummary,
  tools?: ToolShare,
): GaugeState {
  const anchor = projection.anchor;
  const { serverWindow: server, windowSetting: setting } = settings;
  return {
    projected: projection.projected,
    estimate: projection.estNow,
    anchored: projection.anchored,
    warning: projection.warning,
    window: settings.contextWindow,
    ...(settings.windowSource ? { windowSource: settings.windowSource } : {}),
    ...(server !== undefined && setting !== undefined && server !== setting ? { windowOther: { setting, server } } : {}),
    thresholdPercent: settings.thresholdPercent,
    ...(anchor ? { anchor: { real: anchor.real, est: anchor.est, model: anchor.identity.model, provider: anchor.identity.provider } } : {}),
    totals,
    estimator: { kind: projection.estimator, name: projection.counter, pending: projection.pending },
    ...(projection.unanchoredBecause ? { unanchoredBecause: projection.unanchoredBecause } : {}),
    ...(projection.warningKind ? { warningKind: projection.warningKind } : {}),
    ...(projection.change ? { change: projection.change } : {}),
    ...(tools && tools.count > 0 ? { tools } : {}),
    source: projection.source,
    band: projection.band,
    ...(projection.family ? { family: projection.family } : {}),
  };
}

const WINDOW_SOURCES = {
  settings: 'from candor.contextWindow',
  server: 'as the server reports it runs',
  default: 'the default of candor.contextWindow',
} as const;

/** The percentage the status bar shows: of the band's upper edge, so an estimate errs toward full. */
export function percentOf(state: GaugeState): number {
  return state.window > 0 ? Math.round(((state.projected + bandOf(state)) / state.window) * 100) : 0;
}

function bandOf(state: GaugeState): number {
  return Math.max(0, state.band ?? 0);
}

/**
 * A half-width as the gauge writes it, in the unit of the number it bounds
 * (`±0.9K` beside 47.2K, `±40` beside 950), rounded up, never down.
 */
export function halfWidthText(band: number, projected: number): string {
  if (projected < 1000 || band < 1) return String(Math.ceil(band));
  if (band >= 1_000_000) return `${Math.ceil(band / 100_000) / 10}M`;
  const k = Math.ceil(band / 100) / 10;
  return `${k >= 100 ? Math.ceil(k) : k}K`;
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

/** The status bar text users and tests rely on: `$(pulse) 37% 47.2K/128K`; an estimate `$(pulse) 37% ≈47.2K/128K`. */
export function gaugeText(state: GaugeState): string {
  const approx = bandOf(state) > 0 ? '≈' : '';
  return `$(pulse) ${percentOf(state)}% ${approx}${compactNumber(state.projected)}/${compactNumber(state.window)}`;
}

/**
 * How the number was had, in the words of the accessibility label and the
 * tooltip: "counted by the server", "counted with Qwen3's tokenizer",
 * "anchored" (the provider's last count plus what changed since), or
 * "estimated, plus or minus 0.9K".
 */
export function bandLabel(state: GaugeState): string {
  const band = bandOf(state);
  const plusMinus = band > 0 ? `, plus or minus ${halfWidthText(band, state.projected)}` : '';
  switch (state.source) {
    case 'server':
      return `counted by the server${plusMinus}`;
    case 'tokenizer':
      return `counted with ${state.family ?? 'the model'}'s tokenizer`;
    case 'anchored':
      return `anchored${plusMinus}`;
    case 'estimate':
      return `estimated${plusMinus}`;
    default:
      return state.anchored ? 'anchored' : 'estimated';
  }
}

export function gaugeAccessibilityLabel(state: GaugeState): string {
  const warn = state.warning ? ', warning: the provider stopped reporting usage' : '';
  return `Candor context ${percentOf(state)} percent, ${state.projected} of ${state.window} tokens, ${bandLabel(state)}${warn}`;
}

/** The tooltip's band line: `Count: ≈47.2K ±0.9K (estimated; compaction is tested against 48.1K, the band's upper edge)`. */
export function bandLine(state: GaugeState): string {
  const band = bandOf(state);
  if (band === 0) return `Count: ${compactNumber(state.projected)}, exact (${bandLabel(state)})`;
  const upper = compactNumber(state.projected + band);
  const lower = compactNumber(Math.max(0, state.projected - band));
  return `Count: ≈${compactNumber(state.projected)} ±${halfWidthText(band, state.projected)} (${bandLabel(state)}: between ${lower} and ${upper}; compaction is tested against ${upper})`;
}

const tokens = (n: number): string => n.toLocaleString('en-US');

/**
 * The tooltip's first sentence: the headline as it is made. Anchored, the
 * provider's count and Candor's estimate of what changed since
 * ("1,407 counted by the provider + 10 ±1 estimated since = 1,417"); a
 * count of the whole payload by the server or the model's own tokenizer,
 * in the words of bandLabel; without either, Candor's estimate and its band
 * alone. The one place this sum is put in words.
 */
export function countSentence(state: GaugeState): string {
  const band = bandOf(state);
  const plusMinus = band > 0 ? ` ±${tokens(Math.ceil(band))}` : '';
  if (state.source === 'server' || state.source === 'tokenizer') return `${band > 0 ? '≈' : ''}${tokens(state.projected)}${plusMinus} ${bandLabel(state).replace(/, plus or minus .*$/, '')}`;
  const anchor = state.anchor;
  if (!state.anchored || !anchor) return `≈${tokens(state.projected)}${plusMinus} estimated by Candor (no count from the provider to add to)`;
  const since = state.projected - anchor.real;
  if (since === 0) return `${tokens(anchor.real)} counted by the provider, nothing added since`;
  const change = since > 0 ? `+ ${tokens(since)}${plusMinus} estimated since` : `− ${tokens(-since)}${plusMinus} estimated as removed since`;
  return `${tokens(anchor.real)} counted by the provider ${change} = ${tokens(state.projected)}`;
}

/** The chat header's line about the count, in the status bar's words: one way to say it in both places. */
export interface GaugeHeadline {
  /** `Context 37% · ≈47,213 / 128,000 · estimated, plus or minus 0.9K`: the percentage of the band's upper edge, as the status bar shows. */
  readonly text: string;
  /** The tooltip's first sentence: the sum the number is. */
  readonly title: string;
  readonly warning: boolean;
}

export function gaugeHeadline(state: GaugeState): GaugeHeadline {
  const approx = bandOf(state) > 0 ? '≈' : '';
  return {
    text: `Context ${percentOf(state)}% · ${approx}${tokens(state.projected)} / ${tokens(state.window)} · ${bandLabel(state)}`,
    title: countSentence(state),
    warning: state.warning,
  };
}

/** Why the tooltip's estimate is not the number shown, in the words of where the number came from. */
function estimateAside(state: GaugeState): string {
  if (state.source === 'server') return ' (the number above is the server\'s own count instead)';
  return state.anchored && state.anchor ? ' (the sum above uses the provider\'s count instead)' : '';
}

export function gaugeTooltip(state: GaugeState): string {
  const lines = [
    countSentence(state),
    `Context: ${tokens(state.projected)} of ${tokens(state.window)} tokens (${percentOf(state)}%)`,
    state.anchor
      ? `Anchor: ${tokens(state.anchor.real)} real (est ${tokens(state.anchor.est)}) from ${shortModelName(state.anchor.model)} @ ${state.anchor.provider}`
      : 'Anchor: none',
    `Candor's own estimate of the whole payload: ${tokens(state.estimate)}${estimateAside(state)}`,
    `Compaction threshold: ${state.thresholdPercent}%`,
  ];
  if (state.source) lines.splice(2, 0, bandLine(state));
  if (state.windowSource) lines.splice(2, 0, windowLine(state));
  if (state.estimator) lines.push(estimatorLine(state.estimator));
  if (!state.anchored && state.unanchoredBecause) lines.push(`Estimated because ${UNANCHORED[state.unanchoredBecause]}`);
  if (state.change) lines.push(changeLine(state.change));
  if (state.warning) {
    lines.push(
      state.warningKind === 'usage-unsupported'
        ? 'Warning: this server never reports usage in streams — the count is an estimate.'
        : 'Warning: the provider stopped reporting usage — the count is an estimate.',
    );
  }
  if (state.tools) lines.push(toolsLine(state.tools));
  if (state.totals) {
    const t = state.totals;
    lines.push(`Drift: ${plural(t.switches, 'model switch', 'model switches')}, ${plural(t.losses, 'lost count')} (${t.warned} warned), ${t.drifts} re-anchored, |delta| sum ${tokens(t.abs_delta_sum)}`);
  }
  lines.push('Click to open the drift view.');
  return lines.join('\n');
}

/** `Window: 2,048 tokens, as the server reports it runs (smaller than candor.contextWindow, 32,768)`. */
function windowLine(state: GaugeState): string {
  const line = `Window: ${state.window.toLocaleString('en-US')} tokens, ${WINDOW_SOURCES[state.windowSource ?? 'default']}`;
  const other = state.windowOther;
  if (!other) return line;
  return other.server < other.setting
    ? `${line} (smaller than candor.contextWindow, ${other.setting.toLocaleString('en-US')})`
    : `${line} (the server runs ${other.server.toLocaleString('en-US')})`;
}

const UNANCHORED: Record<UnanchoredReason, string> = {
  'not-established': 'no request has completed in this session yet.',
  'after-compaction': 'the first request after a compaction measures the new history.',
  'after-switch': 'the model changed: the next reply re-anchors.',
  'after-shrink': 'more than half of what the anchor measured was removed; the next request measures what is left.',
  'no-usage': 'the provider did not report usage for the last reply.',
  'suspect-usage': 'the provider\'s last count was too low to trust (a truncated or under-counted prompt).',
};

/** `Tools: 31, 6.2K tokens; 'github' 4.9K`. */
export function toolsLine(tools: ToolShare): string {
  const servers = tools.servers.map((s) => `'${s.name}' ${compactNumber(s.tokens)}`);
  return `Tools: ${tools.count}, ${compactNumber(tools.tokens)} tokens${servers.length > 0 ? `; ${servers.join(', ')}` : ''}`;
}

function estimatorLine(estimator: NonNullable<GaugeState['estimator']>): string {
  const pending = estimator.pending > 0 ? `; ${plural(estimator.pending, 'part')} estimated from fitted rates until their exact count lands` : '';
  switch (estimator.kind) {
    case 'tokenizer':
      return `Estimator: tokenizer (${estimator.name})${pending}`;
    case 'calibrated heuristic':
      return `Estimator: calibrated heuristic (rates per script and kind of text fitted to this provider's own counts)${pending}`;
    default:
      return `Estimator: heuristic (no known tokenizer for this model: rates learnt from open tokenizers, calibrating to the provider's counts)${pending}`;
  }
}

function changeLine(change: AnchorChange): string {
  const what = change.parts.length > 0 ? change.parts.map((part) => (part === 'system' ? 'the system prompt (memory or prompt version)' : 'the tool list')).join(' and ') : 'the payload';
  const at = change.at.slice(11, 19);
  const removed = change.removed.toLocaleString('en-US');
  return change.kind === 'dropped'
    ? `Anchor dropped at ${at} UTC: ${what} changed and more than half of the anchored estimate (${removed} tokens) was removed.`
    : `Shrunk at ${at} UTC: ${what} changed; the estimate of what was removed (${removed} tokens) is subtracted from the anchor.`;
}
