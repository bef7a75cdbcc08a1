import * as path from 'node:path';
import * as vscode from 'vscode';
import { Conversation, type ChatEvent, type ChatSettings, type RequestTrace } from '../../core/chat/conversation';
import { sessionCompactor } from '../../core/chat/compactor';
import { noTools, type ToolHost } from '../../core/chat/tools';
import { transcriptOf } from '../../core/chat/transcript';
import { ContextGate, DriftLog, isGateState, textModelSummarizer } from '../../core/context';
import { listSessions, Session } from '../../core/session/session';
import { saveRant } from '../../core/rants';
import type { Logger } from '../../core/log';
import type { SecretSet } from '../../core/redact';
import type { GaugeState } from '../../core/context/gauge';
import type { Settings } from '../settings/config';
import type { Providers } from '../provider/provider';
import type { Estimators } from '../context/estimators';
import type { ChatView } from './chatView';
import type { StatusGauge } from '../context/statusGauge';
import { Disposable } from '../platform/lifecycle';
import { CURRENT_SESSION_KEY, takeCurrentSession } from './currentSession';
import type { MessageHandlers } from './router';

export interface ChatControllerDeps {
  readonly dataDir: string;
  readonly settings: Settings;
  readonly providers: Providers;
  readonly estimators: Estimators;
  readonly view: ChatView;
  readonly gauge: StatusGauge;
  /** Remembers the current session for this workspace. */
  readonly workspaceState: vscode.Memento;
  /** Where versions before kept it for every window; read once, to migrate. */
  readonly globalState: vscode.Memento;
  readonly log: Logger;
  /** The extension host's one SecretSet: notices, partial replies, traces and messages shown are redacted with it. */
  readonly secrets: SecretSet;
  readonly systemPrompt: () => Promise<string>;
  readonly tools: () => ToolHost;
  /** Every request that ended (the prompt-evolution trace store). */
  readonly trace: (trace: RequestTrace) => void;
}

export interface SavedRant {
  readonly id: string;
  readonly session: string | null;
}

/**
 * Owns the current session and its conversation, and connects them to the
 * chat view and the status bar. Everything it knows is on disk, so a reload
 * rebuilds it from the session file.
 */
export class ChatController extends Disposable {
  private conversation: Conversation;
  private readonly driftLog: DriftLog;
  private lastGauge: GaugeState | undefined;
  private readonly rantSaved = this.register(new vscode.EventEmitter<SavedRant>());
  /** A rant was saved, from the chat or the palette. */
  readonly onDidSaveRant = this.rantSaved.event;

  constructor(private readonly deps: ChatControllerDeps) {
    super();
    this.driftLog = new DriftLog(path.join(deps.dataDir, 'drift.jsonl'));
    this.conversation = this.openInitial();
    this.register(deps.view.onDidBecomeReady(() => void this.sendInit()));
    // Records still on their way to disk when the extension stops are written before it goes.
    this.register({ dispose: () => void this.conversation.session.flushed().catch((err: unknown) => deps.log.error(`session file: ${String(err)}`)) });
  }

  get sessionsDir(): string {
    return path.join(this.deps.dataDir, 'sessions');
  }

  get currentSession(): Session {
    return this.conversation.session;
  }

  get drift(): DriftLog {
    return this.driftLog;
  }

  /** The chat's own messages from the view: the conversation's. */
  messageHandlers(): MessageHandlers<'chat'> {
    return {
      send: (message) => this.send(message.text),
      stop: () => this.conversation.stop(),
      retry: async () => {
        await this.prepare();
        await this.conversation.retry();
      },
    };
  }

  async send(text: string): Promise<void> {
    const rant = /^\/rant(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (rant) {
      await this.rant(rant[1] ?? '');
      return;
    }
    await this.prepare();
    await this.conversation.send(text);
  }

  async rant(text: string): Promise<void> {
    if (text.trim() === '') {
      void vscode.window.showWarningMessage('A rant needs some text: /rant <what went wrong>');
      return;
    }
    const project = vscode.workspace.workspaceFolders?.[0]?.name ?? '';
    const saved = saveRant(this.deps.dataDir, { text, project, session: this.currentSession.id });
    this.deps.log.info(`rant ${saved.id} saved (${text.length} chars)`);
    this.rantSaved.fire({ id: saved.id, session: saved.session });
    void vscode.window.showInformationMessage('Rant saved');
  }

  newSession(): void {
    this.conversation.stop();
    this.conversation = this.build(Session.create(this.sessionsDir, vscode.workspace.workspaceFolders?.[0]?.name));
    void this.deps.workspaceState.update(CURRENT_SESSION_KEY, this.currentSession.file);
    void this.sendInit();
  }

  async openSession(): Promise<void> {
    const sessions = listSessions(this.sessionsDir);
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage('There are no saved sessions yet.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      sessions.map((s) => ({ label: this.deps.secrets.redact(s.title), description: s.updated.replace('T', ' ').slice(0, 16), detail: s.id === this.currentSession.id ? 'current' : undefined, file: s.file })),
      { title: 'Candor: Open Session…', placeHolder: 'Reopen a past session' },
    );
    if (!pick) return;
    this.conversation.stop();
    this.conversation = this.build(Session.open(pick.file));
    await this.deps.workspaceState.update(CURRENT_SESSION_KEY, pick.file);
    await this.sendInit();
  }

  async compact(): Promise<void> {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Candor: compacting the context', cancellable: true },
      async (_progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        await this.prepare();
        try {
          const result = await this.conversation.compactNow(controller.signal);
          void vscode.window.showInformationMessage(`Compacted ${result.replaced} messages into a summary; the anchor was dropped.`);
        } catch (err) {
          void vscode.window.showWarningMessage(this.deps.secrets.redact(`Compaction did not happen, the history is unchanged: ${err instanceof Error ? err.message : String(err)}`));
        }
      },
    );
  }

  /** Settings changed (model, provider, window): show the new state. */
  async refresh(): Promise<void> {
    this.deps.view.post({ type: 'provider', provider: this.deps.providers.info() });
    await this.prepare().catch(() => undefined);
    await this.conversation.publishGauge().catch((err: unknown) => this.deps.log.warn(`gauge: ${String(err)}`));
  }

  /** Starts the model's tokenizer in the background, so the first send does not wait for it. */
  private async prepare(): Promise<void> {
    this.deps.estimators.warm(this.deps.providers.identity().model);
  }

  private async sendInit(): Promise<void> {
    await this.prepare().catch((err: unknown) => this.deps.log.error(`estimator: ${String(err)}`));
    const session = this.currentSession;
    this.lastGauge = await this.conversation.publishGauge().catch(() => this.lastGauge);
    const settings = this.deps.settings.read();
    this.deps.view.post({
      type: 'init',
      entries: transcriptOf(session),
      busy: this.conversation.busy,
      provider: this.deps.providers.info(),
      gauge: this.lastGauge,
      trusted: vscode.workspace.isTrusted,
      welcome: !settings.baseUrl,
      sessionTitle: session.title(),
    });
    if (session.skippedLines > 0) {
      this.deps.log.warn(`session ${session.id}: ${session.skippedLines} unreadable line(s) skipped; the file is kept as it is`);
    }
  }

  private openInitial(): Conversation {
    const { file, migrated } = takeCurrentSession(this.deps.workspaceState, this.deps.globalState, this.sessionsDir);
    if (migrated) this.deps.log.info(`the current session is now kept per workspace; this one keeps ${path.basename(file ?? '')}`);
    if (file) {
      try {
        return this.build(Session.open(file));
      } catch (err) {
        this.deps.log.warn(`could not reopen session ${file}: ${String(err)}`);
      }
    }
    const session = Session.create(this.sessionsDir, vscode.workspace.workspaceFolders?.[0]?.name);
    void this.deps.workspaceState.update(CURRENT_SESSION_KEY, session.file);
    return this.build(session);
  }

  private build(session: Session): Conversation {
    const stored = session.lastGateState();
    const gate = new ContextGate({ session: session.id, sink: this.driftLog, state: isGateState(stored) ? stored : undefined });
    const summarize = textModelSummarizer(this.deps.providers);
    return new Conversation({
      session,
      gate,
      identity: () => this.deps.providers.identity(),
      driftTotals: () => this.driftLog.readDrift().totals,
      estimate: (model, messages) => this.deps.estimators.estimate(model, messages),
      provider: () => this.deps.providers.handle(),
      settings: () => this.chatSettings(),
      systemPrompt: this.deps.systemPrompt,
      tools: () => (vscode.workspace.isTrusted ? this.deps.tools() : noTools),
      compactor: sessionCompactor(summarize),
      // A conversation left behind by New/Open Session may still be winding down: its events are not shown.
      emit: (event) => {
        if (this.conversation === undefined || this.conversation.session === session) this.relay(event);
      },
      log: this.deps.log,
      // Traces hold ids and numbers; redacted all the same, as everything written is.
      trace: (trace) => this.deps.trace(this.deps.secrets.redactDeep(trace)),
      secrets: this.deps.secrets,
    });
  }

  private chatSettings(): ChatSettings {
    const s = this.deps.settings.read();
    return {
      contextWindow: s.contextWindow,
      thresholdPercent: s.thresholdPercent,
      keepTurns: s.keepTurns,
    };
  }

  private relay(event: ChatEvent): void {
    if (event.type === 'gauge') {
      this.lastGauge = event.gauge;
      this.deps.gauge.show(event.gauge);
    }
    this.deps.view.post(event);
  }
}
