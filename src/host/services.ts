import * as vscode from 'vscode';
import { promptSource } from '../core/prompt/systemPrompt';
import { agentTools } from '../core/tools/agentTools';
import { bundledTokenizerModules } from '../core/context/tokenizer/workerTokenizer';
import { environmentSecrets } from '../core/redact';
import { appendQueue } from '../core/jsonl';
import { DisposableStore } from './platform/lifecycle';
import { createLog } from './platform/log';
import { Settings, confirmWorkspaceUrls } from './settings/config';
import { resolveDataDir } from './dataFolder/dataDir';
import { ApiKeys } from './provider/secrets';
import { Notifier } from './platform/notify';
import { Providers } from './provider/provider';
import { Estimators } from './context/estimators';
import { ChatView } from './chat/chatView';
import { StatusGauge } from './context/statusGauge';
import { ChatController } from './chat/chatController';
import { registerChatCommands } from './chat/commands';
import { WorkspaceGit, vscodeUnsavedBuffers } from './git/workspaceGit';
import { EditProposals } from './chat/proposeEdit';
import { PromptEvolution } from './promptEvolution/promptEvolution';
import { MemoryFeature } from './memory/memory';
import { EvolutionFeature } from './evolution/evolution';
import { rantsMessage } from './evolution/rantsView';

/** Builds Candor's services and returns the one disposable that owns them all. */
export function createServices(context: vscode.ExtensionContext): vscode.Disposable {
  const started = performance.now();
  const store = new DisposableStore();
  // One SecretSet for the extension host: the log, the views and the data files redact with it (docs/architecture.md, "Secrets").
  const secrets = environmentSecrets();
  const { channel, logger: log } = createLog(secrets);
  store.add(channel);
  const settings = store.add(new Settings(context.globalState));
  const initial = settings.read();
  const data = resolveDataDir(initial.dataDir, context.globalStorageUri, initial.repository);
  if (data.refused) {
    log.warn(data.refused);
    void vscode.window.showWarningMessage(data.refused);
  }
  log.info(`Candor ${String(context.extension.packageJSON.version)} — data folder ${data.dir}`);

  const keys = store.add(new ApiKeys(context.secrets, secrets));
  const notify = new Notifier(secrets, log, channel);
  // Learn the stored key now, so that it is redacted before the first request reads it.
  void keys.get().catch((err: unknown) => log.warn(`secret storage: ${String(err)}`));
  const estimators = new Estimators(bundledTokenizerModules(vscode.Uri.joinPath(context.extensionUri, 'dist').fsPath));
  store.add(estimators);
  // The offline provider reports usage counted with o200k: load it in the background now.
  if (!initial.baseUrl) void estimators.countText('o200k_base', '').catch((err: unknown) => log.error(`tokenizer: ${String(err)}`));
  const providers = new Providers(
    () => settings.read(),
    () => keys.get(),
    (text) => estimators.countText('o200k_base', text),
    log,
    context.globalState,
  );
  store.add({ dispose: () => providers.dispose() });
  const gauge = store.add(new StatusGauge());
  // The view knows no feature: each one registers the messages it owns with the view's router, below.
  const view = store.add(new ChatView(context.extensionUri, log, secrets));
  const git = store.add(new WorkspaceGit(log, (info) => view.post({ type: 'git', git: info }), () => ({
    secrets: secrets.values(),
    openRepositoryInParentFolders: settings.read().openRepositoryInParentFolders,
  })));
  store.add(view.onDidBecomeReady(() => view.post({ type: 'git', git: git.info })));
  const proposals = store.add(new EditProposals());
  const memory = store.add(new MemoryFeature({ dataDir: data.dir, settings, providers, log, notify }));
  const toolHost = agentTools({
    roots: () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    repository: (folder) => git.repository(folder),
    unsaved: vscodeUnsavedBuffers,
    proposeEdit: (proposal, signal) => proposals.propose(proposal, signal),
    remember: (text) => memory.remember(text),
  });
  const promptEvolution = store.add(new PromptEvolution({ extensionUri: context.extensionUri, dataDir: data.dir, providers, log, notify, secrets }));
  const evolution = store.add(new EvolutionFeature({ dataDir: data.dir, settings, providers, keys, log, notify, changed: () => view.post(rantsMessage(evolution)) }));
  const chat = store.add(new ChatController({
    dataDir: data.dir,
    settings,
    providers,
    estimators,
    view,
    gauge,
    workspaceState: context.workspaceState,
    globalState: context.globalState,
    log,
    secrets,
    tools: () => toolHost,
    trace: promptEvolution.traceSink(),
    // Once per request, with the tools that request sends (none in an untrusted workspace).
    prompt: promptSource({ prompt: async () => (await promptEvolution.currentPrompt()).text, memory: () => memory.promptText() }),
  }));
  // Each feature handles the chat view's messages it owns (docs/architecture.md, "One message, end to end").
  view.router.register('chat', chat.messageHandlers());
  view.router.register('evolution', evolution.messageHandlers());
  view.router.register('prompt evolution', promptEvolution.messageHandlers(() => chat.currentSession.id));
  store.add(view.onDidBecomeReady(() => view.post(rantsMessage(evolution))));
  store.add(chat.onDidSaveRant((rant) => {
    promptEvolution.linkRant(rant.id, rant.session);
    view.post(rantsMessage(evolution));
  }));
  for (const d of registerChatCommands({ dataDir: data.dir, chat, view, keys, providers, settings, channel, log, notify })) store.add(d);
  // A new user finds the chat: it shows once, on the first activation after install.
  void view.showOnFirstRun(context.globalState);

  store.add(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('candor')) {
      void confirmWorkspaceUrls(settings);
      void chat.refresh();
    }
  }));
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => void chat.refresh()));
  void confirmWorkspaceUrls(settings).then(() => chat.refresh());
  log.info(`activated in ${Math.round(performance.now() - started)} ms`);
  return store;
}

/**
 * Resolves when every record appended to a session file is on disk; for
 * `deactivate`, whose promise VS Code waits for. VS Code disposes the
 * subscriptions in the same turn as it calls `deactivate`: waiting one turn
 * first lets what disposal appends (a stopped reply) join the flush.
 */
export async function flushWrites(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await appendQueue.flushed().catch(() => undefined);
}
