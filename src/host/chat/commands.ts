import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import type { DriftView } from '../../protocol/chat';
import type { ChatController } from './chatController';
import type { ChatView } from './chatView';
import type { ApiKeys } from '../provider/secrets';
import type { Providers } from '../provider/provider';
import type { Settings } from '../settings/config';
import { selectModel } from '../provider/selectModel';
import { shortModelName } from '../../core/provider/modelName';
import { registerCommand } from '../platform/command';
import type { Notifier } from '../platform/notify';

export interface CommandDeps {
  readonly dataDir: string;
  readonly chat: ChatController;
  readonly view: ChatView;
  readonly keys: ApiKeys;
  readonly providers: Providers;
  readonly settings: Settings;
  readonly channel: vscode.LogOutputChannel;
  readonly log: Logger;
  /** A command that fails is logged and shown through it, redacted like everything else. */
  readonly notify: Notifier;
}

/** The chat's commands. Features with commands of their own register them beside their code. */
export function registerChatCommands(deps: CommandDeps): vscode.Disposable[] {
  const { chat, log } = deps;
  const run = (id: string, fn: () => unknown): vscode.Disposable => registerCommand(id, fn, deps.notify);
  return [
    run('candor.rant', async () => {
      const text = await vscode.window.showInputBox({ title: 'Candor: Rant', prompt: 'What went wrong?', ignoreFocusOut: true });
      if (text === undefined) return;
      await chat.rant(text);
    }),
    run('candor.compact', () => chat.compact()),
    run('candor.newSession', async () => {
      chat.newSession();
      await deps.view.reveal();
    }),
    run('candor.openSession', () => chat.openSession()),
    run('candor.selectModel', () => selectModel(deps.settings, deps.providers, log)),
    run('candor.setApiKey', async () => {
      if (await deps.keys.set()) void vscode.window.showInformationMessage('Candor: API key saved in secret storage.');
    }),
    run('candor.clearApiKey', async () => {
      await deps.keys.clear();
      void vscode.window.showInformationMessage(process.env.OPENAI_API_KEY ? 'Candor: API key cleared; OPENAI_API_KEY from the environment is still used.' : 'Candor: API key cleared.');
    }),
    run('candor.showDrift', async () => {
      await deps.view.reveal();
      deps.view.post({ type: 'drift', drift: driftView(chat, (slug) => deps.providers.nameOf(slug)) });
    }),
    run('candor.showLog', () => deps.channel.show()),
  ];
}

/** The drift view; `name` turns a provider's slug into the host and port a person knows. */
export function driftView(chat: ChatController, name: (slug: string) => string): DriftView {
  const read = chat.drift.readDrift();
  const open = read.open.find((w) => w.session === chat.currentSession.id) ?? read.open[read.open.length - 1];
  const opening = open?.losses[0];
  return {
    totals: read.summary,
    openWindow: opening ? { since: opening.ts, reason: open.losses.map((l) => l.reason).join(' + '), model: shortModelName(opening.model), provider: name(opening.provider) } : undefined,
    points: read.events.flatMap((e) => (e.event === 'anchor_drift' ? [{ ts: e.ts, delta: e.delta, windowMaxEst: e.window_max_est, model: shortModelName(e.model), provider: name(e.provider) }] : [])),
    skippedLines: read.skipped,
  };
}
