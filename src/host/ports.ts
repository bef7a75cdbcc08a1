import * as vscode from 'vscode';
import { bundledTokenizerModules } from '../core/context/tokenizer/workerTokenizer';
import { bundledFamilyModules } from '../core/context/tokenizer/familyTokenizer';
import { environmentSecrets, type SecretSet } from '../core/redact';
import type { Logger } from '../core/log';
import type { DisposableStore } from './platform/lifecycle';
import { createLog } from './platform/log';
import { Settings } from './settings/config';
import { resolveDataDir } from './dataFolder/dataDir';
import { ApiKeys } from './provider/secrets';
import { Notifier } from './platform/notify';
import { Providers } from './provider/provider';
import { Estimators } from './context/estimators';
import { ChatView } from './chat/chatView';
import { StatusGauge } from './context/statusGauge';

/**
 * What every feature may use: the extension host's shared services. Each
 * feature registers itself against these (its `register*` function); no
 * feature reaches into another one except through what a register function
 * returns (docs/architecture.md, "Layout").
 */
export interface Ports {
  readonly context: vscode.ExtensionContext;
  /** The extension host's one SecretSet: the log, the views and the data files redact with it (docs/architecture.md, "Secrets"). */
  readonly secrets: SecretSet;
  readonly channel: vscode.LogOutputChannel;
  readonly log: Logger;
  readonly notify: Notifier;
  readonly settings: Settings;
  readonly dataDir: string;
  readonly keys: ApiKeys;
  readonly estimators: Estimators;
  readonly providers: Providers;
  readonly gauge: StatusGauge;
  /** The chat view knows no feature: each one registers the messages it owns with its router. */
  readonly view: ChatView;
}

/** Creates the shared services, each owned by `store`. */
export function createPorts(context: vscode.ExtensionContext, store: DisposableStore): Ports {
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
  // Learn the stored key now, so that it is redacted before the first request reads it.
  void keys.get().catch((err: unknown) => log.warn(`secret storage: ${String(err)}`));
  const dist = vscode.Uri.joinPath(context.extensionUri, 'dist').fsPath;
  const estimators = store.add(new Estimators(bundledTokenizerModules(dist), bundledFamilyModules(dist)));
  // The offline provider reports usage counted with o200k: load it in the background now.
  if (!initial.baseUrl) void estimators.countText('o200k_base', '').catch((err: unknown) => log.error(`tokenizer: ${String(err)}`));
  const providers = new Providers(() => settings.read(), () => keys.get(), (text) => estimators.countText('o200k_base', text), log, context.globalState);
  store.add({ dispose: () => providers.dispose() });
  return {
    context,
    secrets,
    channel,
    log,
    notify: new Notifier(secrets, log, channel),
    settings,
    dataDir: data.dir,
    keys,
    estimators,
    providers,
    gauge: store.add(new StatusGauge((slug) => providers.nameOf(slug))),
    view: store.add(new ChatView(context.extensionUri, log, secrets)),
  };
}
