/**
 * Typed messages between the extension host and the chat webview. The
 * webview says `ready` before the host posts anything; streamed replies
 * travel as deltas, never as the whole transcript again. Every message from
 * the webview is untrusted: `parseWebviewMessage` validates it, and what does
 * not fit is dropped (and logged by the caller).
 */
import type { TranscriptEntry } from '../core/chat/transcript';
import type { GaugeState } from '../core/context/gauge';

export type { TranscriptEntry, GaugeState };

export interface ProviderInfo {
  readonly label: string;
  readonly model: string;
  readonly provider: string;
  readonly offline: boolean;
}

export interface GitInfo {
  readonly available: boolean;
  readonly summary: string;
  readonly readOnly: boolean;
  readonly reasons: readonly string[];
}

export interface DriftPoint {
  readonly ts: string;
  readonly delta: number;
  readonly model: string;
  readonly provider: string;
}

export interface DriftView {
  readonly totals: { readonly windows: number; readonly warned: number; readonly drifts: number; readonly abs_delta_sum: number };
  readonly openWindow?: { readonly since: string; readonly reason: string; readonly model: string; readonly provider: string };
  readonly points: readonly DriftPoint[];
  readonly skippedLines: number;
}

export interface RantView {
  readonly id: string;
  readonly ts: string;
  readonly text: string;
  readonly status: 'new' | 'duplicate' | 'triaged' | 'acted' | 'dismissed';
  readonly class: string | null;
  readonly branch: string | null;
  readonly commit: string | null;
}

export interface RunView {
  readonly run: string;
  readonly ts: string;
  readonly outcome: string;
  readonly reason: string;
  readonly branch: string | null;
  readonly diffstat: string | null;
  readonly gateTail: string | null;
  readonly gatePassed: boolean | null;
}

export type HostMessage =
  | {
      readonly type: 'init';
      readonly entries: readonly TranscriptEntry[];
      readonly busy: boolean;
      readonly provider: ProviderInfo;
      readonly gauge?: GaugeState;
      readonly trusted: boolean;
      readonly welcome: boolean;
      readonly sessionTitle: string;
    }
  | { readonly type: 'entry'; readonly entry: TranscriptEntry }
  | { readonly type: 'delta'; readonly id: string; readonly text: string }
  | ReplaceTextMessage
  | { readonly type: 'busy'; readonly busy: boolean }
  | { readonly type: 'gauge'; readonly gauge: GaugeState }
  | { readonly type: 'provider'; readonly provider: ProviderInfo }
  | { readonly type: 'git'; readonly git: GitInfo }
  | { readonly type: 'drift'; readonly drift: DriftView }
  | { readonly type: 'rants'; readonly rants: readonly RantView[]; readonly runs: readonly RunView[] };

/**
 * The whole text of a streaming entry, in place of what its deltas built so
 * far: sent when redacting the accumulated reply changed text the view
 * already shows (docs/architecture.md, "Secrets").
 */
export interface ReplaceTextMessage {
  readonly type: 'replaceText';
  readonly id: string;
  readonly text: string;
}

export function isReplaceTextMessage(value: unknown): value is ReplaceTextMessage {
  if (value === null || typeof value !== 'object') return false;
  const m = value as Record<string, unknown>;
  return m.type === 'replaceText' && typeof m.id === 'string' && typeof m.text === 'string';
}

/** Commands the webview may ask the host to run: a fixed list, nothing else. */
export const WEBVIEW_COMMANDS = ['candor.selectModel', 'candor.setApiKey', 'candor.newSession', 'candor.openSession', 'candor.compact', 'candor.showDrift', 'candor.rant', 'candor.showLog', 'candor.evolve'] as const;
export type WebviewCommand = (typeof WEBVIEW_COMMANDS)[number];

export type WebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'send'; readonly text: string }
  | { readonly type: 'stop' }
  | { readonly type: 'retry' }
  | { readonly type: 'runCommand'; readonly command: WebviewCommand }
  | { readonly type: 'feedback'; readonly entryId: string; readonly value: 'up' | 'down' }
  | { readonly type: 'dismissRant'; readonly id: string }
  | { readonly type: 'takeBranch'; readonly branch: string }
  | { readonly type: 'showDiff'; readonly branch: string };

/** Longest message a user may send from the chat box (1 MiB of text). */
export const MAX_SEND_CHARS = 1_048_576;

export function parseWebviewMessage(value: unknown): WebviewMessage | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const only = (...keys: string[]): boolean => Object.keys(m).every((k) => k === 'type' || keys.includes(k));
  switch (m.type) {
    case 'ready':
    case 'stop':
    case 'retry':
      return only() ? ({ type: m.type } as WebviewMessage) : undefined;
    case 'send':
      return only('text') && typeof m.text === 'string' && m.text.trim() !== '' && m.text.length <= MAX_SEND_CHARS ? { type: 'send', text: m.text } : undefined;
    case 'runCommand':
      return only('command') && typeof m.command === 'string' && (WEBVIEW_COMMANDS as readonly string[]).includes(m.command)
        ? { type: 'runCommand', command: m.command as WebviewCommand }
        : undefined;
    case 'feedback':
      return only('entryId', 'value') && typeof m.entryId === 'string' && m.entryId.length <= 200 && (m.value === 'up' || m.value === 'down')
        ? { type: 'feedback', entryId: m.entryId, value: m.value }
        : undefined;
    case 'dismissRant':
      return only('id') && typeof m.id === 'string' && /^[0-9a-z-]{1,64}$/.test(m.id) ? { type: 'dismissRant', id: m.id } : undefined;
    case 'takeBranch':
    case 'showDiff':
      return only('branch') && typeof m.branch === 'string' && /^candor\/[0-9a-z-]{1,80}$/.test(m.branch) ? { type: m.type, branch: m.branch } : undefined;
    default:
      return undefined;
  }
}
