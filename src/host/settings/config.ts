import * as vscode from 'vscode';
import { resolveCandorSettings, type CandorSettings } from '../../core/settings/resolve';

export type { CandorSettings } from '../../core/settings/resolve';

const CONFIRMED_URLS = 'candor.confirmedBaseUrls';

/**
 * Settings as VS Code holds them, read through the trust rules of
 * `core/settings/resolve` (docs/architecture.md, "Settings and trust").
 */
export class Settings implements vscode.Disposable {
  /**
   * Read once per change: every request reads the settings, and `inspect`
   * of each key costs more than the rest of the send path. Created before
   * any other listener, so the memo is gone before anyone re-reads it.
   */
  #memo: CandorSettings | undefined;
  readonly #listeners: vscode.Disposable[];

  constructor(private readonly state: vscode.Memento) {
    const forget = (): void => {
      this.#memo = undefined;
    };
    this.#listeners = [
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('candor')) forget();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(forget),
      vscode.workspace.onDidChangeWorkspaceFolders(forget),
    ];
  }

  read(): CandorSettings {
    this.#memo ??= this.#resolve();
    return this.#memo;
  }

  #resolve(): CandorSettings {
    const c = vscode.workspace.getConfiguration('candor');
    return resolveCandorSettings({
      inspect: (key) => c.inspect(key),
      trusted: vscode.workspace.isTrusted,
      confirmedUrls: this.confirmedUrls(),
    });
  }

  dispose(): void {
    for (const listener of this.#listeners) listener.dispose();
  }

  confirmedUrls(): string[] {
    return this.state.get<string[]>(CONFIRMED_URLS, []);
  }

  async confirmUrl(url: string): Promise<void> {
    await this.state.update(CONFIRMED_URLS, [...new Set([...this.confirmedUrls(), url])]);
    this.#memo = undefined;
  }
}

/**
 * A workspace may not send the user's key to a new place without the user
 * saying so once: each pending workspace URL (`baseUrl`, or a `models` entry
 * with a URL) is asked about once per change of settings.
 */
export async function confirmWorkspaceUrls(settings: Settings): Promise<void> {
  for (const url of settings.read().pendingUrls) {
    const answer = await vscode.window.showWarningMessage(
      `This workspace's settings name the provider ${url}. Candor would send your API key there. Use it?`,
      'Use It',
      'Keep My Setting',
    );
    if (answer === 'Use It') await settings.confirmUrl(url);
  }
}
