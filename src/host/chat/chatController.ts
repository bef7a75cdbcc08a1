import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Conversation } from '../../core/chat/conversation';
import { openConversation } from '../../core/chat/openConversation';
import type { ChatEvent, ChatSettings, RequestTrace } from '../../core/chat/ports';
import { noTools, type ToolHost } from '../../core/chat/tools';
import { DriftLog } from '../../core/context';
import type { PromptSource } from '../../core/prompt/systemPrompt';
import { Session, type SessionOptions } from '../../core/session/session';
import { OpenedSession } from '../../core/session/opened';
import type { FindMessage, LoadOlderMessage } from '../../protocol/chat';
import { saveRant } from '../../core/rants';
import type { Logger } from '../../core/log';
import type { SecretSet } from '../../core/redact';
import type { GaugeHeadline } from '../../core/context/gauge';
import type { Settings } from '../settings/config';
import type { Providers } from '../provider/provider';
import type { Estimators } from '../context/estimators';
import type { ChatView } from './chatView';
import type { StatusGauge } from '../context/statusGauge';
import { Disposable } from '../platform/lifecycle';
import { CURRENT_SESSION_KEY, takeCurrentSession } from './currentSession';
import { pickSession } from './sessionPicker';
import { TranscriptFeed } from './transcriptFeed';
import { chatSettingsOf } from './chatSettings';
import type { MessageHandlers } from './router';
import { errorMessage } from '../../core/errorMessage';

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
  /** Each request's system prompt, for exactly the tools that request sends. */
  readonly prompt: PromptSource;
  readonly tools: () => ToolHost;
  /** Every request that ended (the prompt-evolution trace store). */
  readonly trace: (trace: RequestTrace) => void;
  /** A session was loaded and its conversation built. */
  readonly sessionLoaded?: (session: Session) => void;
}

/** The current session, as other features name it. */
export interface SessionRef {
  readonly id: string;
  readonly file: string;
}

export interface SavedRant {
  readonly id: string;
  readonly session: string | null;
}

/**
 * Owns the current session and its conversation, and connects them to the
 * chat view and the status bar. Everything it knows is on disk, so a reload
 * rebuilds it from the session file. The view gets the session's newest
 * entries at once; the conversation exists once the whole file is parsed,
 * in the background, and whatever needs it waits for it
 * (docs/architecture.md, "Sessions").
 */
export class ChatController extends Disposable {
  private opened: OpenedSession;
  /** The conversation of `opened`, once its session is loaded. */
  private conversation: Conversation | undefined;
  private conversationReady: Promise<Conversation>;
  private readonly driftLog: DriftLog;
  /** The view follows the current session's live transcript. */
  private readonly feed: TranscriptFeed;
  /** The header's line of the last gauge, for a view that starts again. */
  private lastGauge: GaugeHeadline | undefined;
  private readonly rantSaved = this.register(new vscode.EventEmitter<SavedRant>());
  /** A rant was saved, from the chat or the palette. */
  readonly onDidSaveRant = this.rantSaved.event;

  constructor(private readonly deps: ChatControllerDeps) {
    super();
    this.driftLog = new DriftLog(path.join(deps.dataDir, 'drift.jsonl'));
    this.feed = this.register(new TranscriptFeed((message) => deps.view.post(message)));
    this.opened = this.openInitial();
    this.conversationReady = this.conversationOf(this.opened);
    this.register(deps.view.onDidBecomeReady(() => void this.sendInit()));
    // Records still on their way to disk when the extension stops are written before it goes.
    this.register({ dispose: () => {
      // An open loss window is written as anchor_loss_open before the session's last records are flushed.
      this.conversation?.dispose();
      void this.opened.session?.flushed().catch((err: unknown) => deps.log.error(`session file: ${String(err)}`));
    } });
  }

  get sessionsDir(): string {
    return path.join(this.deps.dataDir, 'sessions');
  }

  get currentSession(): SessionRef {
    return this.opened;
  }

  /** The current session, once loaded (a proposal's Accept finds it there). */
  get loadedSession(): Session | undefined {
    return this.opened.session;
  }

  get drift(): DriftLog {
    return this.driftLog;
  }

  /** The chat's own messages from the view: the conversation's. */
  messageHandlers(): MessageHandlers<'chat'> {
    return {
      send: (message) => this.send(message.text),
      stop: () => this.conversation?.stop(),
      retry: async () => {
        await this.prepare();
        await (await this.loadedConversation())?.retry();
      },
      loadOlder: (message) => this.loadOlder(message),
      find: (message) => this.find(message),
    };
  }

  async send(text: string): Promise<void> {
    const rant = /^\/rant(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (rant) {
      await this.rant(rant[1] ?? '');
      return;
    }
    await this.prepare();
    await (await this.loadedConversation())?.send(text);
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
    void this.rantNextStep();
  }

  /** "Rant saved", and what comes of it: the Rants list shows it; Run Evolution turns rants into tested changes. */
  private async rantNextStep(): Promise<void> {
    const answer = await vscode.window.showInformationMessage(
      'Rant saved. It waits in the Rants list of the Candor chat; Run Evolution turns rants into tested changes.',
      'Show Rants',
      'Run Evolution',
    );
    if (answer === 'Show Rants') {
      await this.deps.view.reveal();
      this.deps.view.post({ type: 'showRants' });
    }
    if (answer === 'Run Evolution') await vscode.commands.executeCommand('candor.evolve');
  }

  newSession(): void {
    this.switchTo(OpenedSession.of(this.createSession()));
    void this.deps.workspaceState.update(CURRENT_SESSION_KEY, this.currentSession.file);
    void this.sendInit();
  }

  async openSession(): Promise<void> {
    const file = await pickSession(this.sessionsDir, this.currentSession.id, (text) => this.deps.secrets.redact(text));
    if (!file) return;
    this.switchTo(OpenedSession.open(file, this.sessionOptions()));
    await this.deps.workspaceState.update(CURRENT_SESSION_KEY, file);
    await this.sendInit();
  }

  async compact(): Promise<void> {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Candor: compacting the context', cancellable: true },
      async (_progress, token) => {
        const controller = new AbortController();
        const cancelled = token.onCancellationRequested(() => controller.abort());
        await this.prepare();
        try {
          const conversation = await this.loadedConversation();
          if (!conversation) return;
          const result = await conversation.compactNow(controller.signal);
          void vscode.window.showInformationMessage(`Compacted ${result.replaced} messages into a summary; the anchor was dropped.`);
        } catch (err) {
          void vscode.window.showWarningMessage(this.deps.secrets.redact(`Compaction did not happen, the history is unchanged: ${errorMessage(err)}`));
        } finally {
          cancelled.dispose();
        }
      },
    );
  }

  /** Settings changed (model, provider, window): show the new state. */
  async refresh(): Promise<void> {
    this.deps.view.post({ type: 'provider', provider: this.deps.providers.info() });
    await this.prepare().catch(() => undefined);
    await this.publishGauge();
  }

  private async publishGauge(): Promise<void> {
    await this.conversationReady.then((c) => c.publishGauge()).catch((err: unknown) => this.deps.log.warn(`gauge: ${String(err)}`));
  }

  /** Starts the model's tokenizer and builds its client in the background, so the first send waits for neither. */
  private async prepare(): Promise<void> {
    this.deps.estimators.warm(this.deps.providers.identity().model);
    void this.deps.providers.handle().catch(() => undefined);
  }

  /**
   * The view (re)started, or the session changed: the newest entries, read
   * from the end of the file until the session is loaded. The gauge needs
   * the whole history; it follows as soon as the session is loaded.
   */
  private async sendInit(): Promise<void> {
    await this.prepare().catch((err: unknown) => this.deps.log.error(`estimator: ${String(err)}`));
    const opened = this.opened;
    let page: ReturnType<OpenedSession['firstPage']>;
    try {
      page = opened.firstPage();
    } catch (err) {
      this.deps.log.warn(`session ${opened.id}: could not read its newest entries: ${String(err)}`);
      page = { entries: [], more: false, title: 'New session', skippedLines: 0 };
    }
    const settings = this.deps.settings.read();
    this.deps.view.post({
      type: 'init',
      session: opened.id,
      entries: page.entries,
      more: page.more,
      busy: this.conversation?.busy ?? false,
      provider: this.deps.providers.info(),
      gauge: this.lastGauge,
      trusted: vscode.workspace.isTrusted,
      welcome: !settings.baseUrl,
      sessionTitle: page.title,
    });
    await this.publishGauge();
  }

  /** The page before the view's oldest entry. */
  private async loadOlder(message: LoadOlderMessage): Promise<void> {
    const opened = this.opened;
    if (message.session !== opened.id) return;
    const page = await opened.older(message.before);
    if (this.opened !== opened) return;
    this.deps.view.post({ type: 'older', session: opened.id, before: message.before, entries: page.entries, more: page.more });
  }

  /** Find in chat: the host looks through the whole session; the view shows what it finds. */
  private async find(message: FindMessage): Promise<void> {
    const opened = this.opened;
    if (message.session !== opened.id) return;
    const answer = await opened.find(message.query, message.from, message.direction, message.oldest, (text) => this.deps.secrets.redact(text));
    if (this.opened !== opened) return;
    this.deps.view.post({ type: 'found', session: opened.id, query: message.query, ...answer });
  }

  private openInitial(): OpenedSession {
    const { file, migrated } = takeCurrentSession(this.deps.workspaceState, this.deps.globalState, this.sessionsDir);
    if (migrated) this.deps.log.info(`the current session is now kept per workspace; this one keeps ${path.basename(file ?? '')}`);
    if (file) return OpenedSession.open(file, this.sessionOptions());
    const session = this.createSession();
    void this.deps.workspaceState.update(CURRENT_SESSION_KEY, session.file);
    return OpenedSession.of(session);
  }

  private createSession(): Session {
    return Session.create(this.sessionsDir, vscode.workspace.workspaceFolders?.[0]?.name, undefined, this.sessionOptions());
  }

  private sessionOptions(): SessionOptions {
    return { redactTitle: (text) => this.deps.secrets.redact(text) };
  }

  /**
   * The current conversation, once its session is loaded; none if the user
   * opened another session meanwhile (what they asked was for the one they left).
   */
  private async loadedConversation(): Promise<Conversation | undefined> {
    const opened = this.opened;
    const conversation = await this.conversationReady;
    return this.opened === opened ? conversation : undefined;
  }

  /** Makes `opened` the current session; a reply of the one before is stopped. */
  private switchTo(opened: OpenedSession): void {
    this.feed.follow(undefined);
    this.conversation?.dispose();
    this.opened.dispose();
    this.opened = opened;
    this.conversation = undefined;
    this.lastGauge = undefined;
    this.conversationReady = this.conversationOf(opened);
  }

  /**
   * The conversation of `opened`, built once its session is loaded. A file
   * that cannot be read leaves it for a new session, as a missing one would.
   */
  private conversationOf(opened: OpenedSession): Promise<Conversation> {
    const started = performance.now();
    const ready = opened.loaded.then(
      ({ session }) => {
        const loaded = performance.now();
        // The view follows the session's one live mapping of its records, until another session is opened (switchTo).
        if (this.opened === opened) this.feed.follow(opened.liveTranscript());
        const conversation = this.build(session);
        this.deps.sessionLoaded?.(session);
        if (this.opened === opened) this.conversation = conversation;
        this.deps.log.info(`session ${session.id}: ${session.all().length} records loaded in ${Math.round(loaded - started)} ms, conversation built in ${Math.round(performance.now() - loaded)} ms`);
        if (session.skippedLines > 0) this.deps.log.warn(`session ${session.id}: ${session.skippedLines} unreadable line(s) skipped; the file is kept as it is`);
        return conversation;
      },
      (err: unknown) => {
        this.deps.log.warn(`could not reopen session ${opened.file}: ${String(err)}`);
        if (this.opened !== opened) throw err;
        this.newSession();
        return this.conversationReady;
      },
    );
    ready.catch(() => undefined);
    return ready;
  }

  private build(session: Session): Conversation {
    return openConversation(session, {
      driftLog: this.driftLog,
      summaryModel: this.deps.providers,
      identity: () => this.deps.providers.identity(),
      // The family from the server's own metadata, never from the model's name (docs/architecture.md, "Exact counts").
      tokenizer: (model) => this.deps.estimators.counterFor(model, this.deps.providers.familyFacts(model)?.family),
      serverCount: (identity) => this.deps.providers.promptCount(identity),
      provider: () => this.deps.providers.handle(),
      settings: () => this.chatSettings(),
      prompt: this.deps.prompt,
      tools: () => (vscode.workspace.isTrusted ? this.deps.tools() : noTools),
      // A conversation left behind by New/Open Session may still be winding down: its events are not shown.
      emit: (event) => {
        if (this.opened.session === session) this.relay(event);
      },
      log: this.deps.log,
      // Traces hold ids and numbers; redacted all the same, as everything written is.
      trace: (trace) => this.deps.trace(this.deps.secrets.redactDeep(trace)),
      onOverflow: (identity, overflow) => this.deps.providers.noteOverflow(identity, overflow),
      secrets: this.deps.secrets,
    });
  }

  private chatSettings(): ChatSettings {
    return chatSettingsOf(this.deps.providers, this.deps.settings.read());
  }

  private relay(event: ChatEvent): void {
    if (event.type === 'gauge') {
      this.lastGauge = event.headline;
      this.deps.gauge.show(event.gauge);
    }
    this.deps.view.post(event);
  }
}
