import * as vscode from 'vscode';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../core/prompt/systemPrompt';
import { noTools } from '../core/chat/tools';
import { estimatorForModel } from '../core/gate';
import { DisposableStore } from './lifecycle';
import { createLog } from './log';
import { Settings } from './config';
import { resolveDataDir } from './dataDir';
import { ApiKeys } from './secrets';
import { Providers } from './provider';
import { Estimators } from './estimators';
import { ChatView } from './chatView';
import { StatusGauge } from './statusGauge';
import { ChatController } from './chatController';
import { registerChatCommands } from './commands';

/** Builds Candor's services and returns the one disposable that owns them all. */
export function createServices(context: vscode.ExtensionContext): vscode.Disposable {
  const store = new DisposableStore();
  const { channel, logger: log } = createLog();
  store.add(channel);
  const settings = new Settings(context.globalState);
  const initial = settings.read();
  const data = resolveDataDir(initial.dataDir, context.globalStorageUri);
  if (data.refused) {
    log.warn(data.refused);
    void vscode.window.showWarningMessage(data.refused);
  }
  log.info(`Candor ${String(context.extension.packageJSON.version)} — data folder ${data.dir}`);

  const keys = new ApiKeys(context.secrets);
  const providers = new Providers(
    () => settings.read(),
    () => keys.get(),
    async () => {
      const estimator = await estimatorForModel('gpt-4o');
      return (text: string) => estimator.countText(text);
    },
    log,
  );
  store.add({ dispose: () => providers.dispose() });
  const estimators = new Estimators();
  const gauge = store.add(new StatusGauge());
  let chat: ChatController | undefined;
  const view = store.add(new ChatView(context.extensionUri, (message) => void chat?.handle(message).catch((err: unknown) => log.error(`chat: ${String(err)}`)), log));
  const toolHost = noTools;
  chat = store.add(new ChatController({
    dataDir: data.dir,
    settings,
    providers,
    estimators,
    view,
    gauge,
    state: context.globalState,
    log,
    tools: () => toolHost,
    systemPrompt: async () => buildSystemPrompt({ prompt: BUILT_IN_PROMPT, toolNames: toolHost.specs().map((t) => t.function.name) }),
  }));
  for (const d of registerChatCommands({ dataDir: data.dir, chat, view, keys, providers, settings, channel, log })) store.add(d);

  store.add(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('candor')) {
      void confirmWorkspaceBaseUrl(settings);
      void chat?.refresh();
    }
  }));
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => void chat?.refresh()));
  void confirmWorkspaceBaseUrl(settings).then(() => chat?.refresh());
  return store;
}

/** A workspace may not send the user's key to a new place without the user saying so once. */
async function confirmWorkspaceBaseUrl(settings: Settings): Promise<void> {
  const pending = settings.read().pendingWorkspaceBaseUrl;
  if (!pending) return;
  const answer = await vscode.window.showWarningMessage(
    `This workspace sets candor.baseUrl to ${pending}. Candor sends your API key there. Use it?`,
    { modal: false },
    'Use It',
    'Keep My Setting',
  );
  if (answer === 'Use It') await settings.confirmBaseUrl(pending);
}
