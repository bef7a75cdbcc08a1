import * as vscode from 'vscode';
import { gaugeAccessibilityLabel, gaugeText, gaugeTooltip, type GaugeState } from '../../core/context/gauge';
import { Disposable } from '../platform/lifecycle';
import { shortModelName } from '../../core/provider/modelName';
import { plural } from '../../core/text';

/** The status bar item `candor.gauge`: the context, anchored or estimated, and the warning state. */
export class StatusGauge extends Disposable {
  private readonly item: vscode.StatusBarItem;

  /** `name`: how a person names a provider slug (`Providers.nameOf`, over the settings snapshot and its trust rules). */
  constructor(private readonly name: (slug: string) => string) {
    super();
    this.item = this.register(vscode.window.createStatusBarItem('candor.gauge', vscode.StatusBarAlignment.Right, 100));
    this.item.name = 'Candor Context';
    this.item.command = 'candor.showDrift';
  }

  show(state: GaugeState): void {
    this.item.text = gaugeText(state);
    this.item.accessibilityInformation = { label: gaugeAccessibilityLabel(state), role: 'button' };
    this.item.tooltip = personTooltip(state, this.name);
    // Warning colour while a loss window warns, and at no other time.
    this.item.backgroundColor = state.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }
}

/**
 * The gauge's tooltip in words a person uses, every number kept: it starts
 * with the headline's sum (`countSentence`), the lines that speak of anchors,
 * deltas and loss windows say what they mean, and a
 * provider is named by its host and port, not by its slug (which stays in
 * the data files).
 */
function personTooltip(state: GaugeState, name: (slug: string) => string): string {
  return gaugeTooltip(state).split('\n').map((line) => {
    if (line.startsWith('Anchor: ')) return anchorLine(state, name);
    if (line.startsWith('Drift: ') && state.totals) return driftLine(state.totals);
    return line;
  }).join('\n');
}

const tokens = (n: number): string => n.toLocaleString('en-US');

function anchorLine(state: GaugeState, name: (slug: string) => string): string {
  const anchor = state.anchor;
  if (!anchor) return 'No provider count yet: the number is Candor\'s own estimate until a reply reports its usage.';
  return `Last count from the provider: ${tokens(anchor.real)} tokens (Candor had estimated ${tokens(anchor.est)}), ${shortModelName(anchor.model)} @ ${name(anchor.provider)}`;
}

/** Switches apart from losses: a switch is the user's choice, a loss the provider's silence (tally.ts). */
function driftLine(t: NonNullable<GaugeState['totals']>): string {
  return `History: ${plural(t.switches, 'model switch', 'model switches')}; the provider's count was missing or not trusted ${plural(t.losses, 'time')}, `
    + `${t.warned} with a warning; re-anchored ${plural(t.drifts, 'time')}, with a total difference of ${plural(t.abs_delta_sum, 'token')} from Candor's estimates`;
}
