import * as vscode from 'vscode';
import { gaugeAccessibilityLabel, gaugeText, gaugeTooltip, type GaugeState } from '../../core/context/gauge';
import { Disposable } from '../platform/lifecycle';

/** The status bar item `candor.gauge`: the context, anchored or estimated, and the warning state. */
export class StatusGauge extends Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    super();
    this.item = this.register(vscode.window.createStatusBarItem('candor.gauge', vscode.StatusBarAlignment.Right, 100));
    this.item.name = 'Candor Context';
    this.item.command = 'candor.showDrift';
  }

  show(state: GaugeState): void {
    this.item.text = gaugeText(state);
    this.item.accessibilityInformation = { label: gaugeAccessibilityLabel(state), role: 'button' };
    this.item.tooltip = gaugeTooltip(state);
    // Warning colour while a loss window warns, and at no other time.
    this.item.backgroundColor = state.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }
}
