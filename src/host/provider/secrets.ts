import * as vscode from 'vscode';
import type { SecretSet } from '../../core/redact';

const KEY = 'candor.apiKey';

/**
 * The API key: SecretStorage first, then OPENAI_API_KEY. Never in settings,
 * logs or data files: every key it reads or stores joins the extension host's
 * SecretSet, so the one redaction pass removes it from then on
 * (docs/architecture.md, "Secrets").
 */
export class ApiKeys implements vscode.Disposable {
  /**
   * The stored key, read once: SecretStorage is a round trip to the
   * workbench (in code-server, to the browser), too slow for every request's
   * send path. Forgotten when the key changes here or in another window.
   */
  #stored: Promise<string | undefined> | undefined;
  readonly #listener: vscode.Disposable;

  constructor(
    private readonly storage: vscode.SecretStorage,
    /** The extension host's one SecretSet (it already holds OPENAI_API_KEY). */
    readonly secrets: SecretSet,
  ) {
    this.#listener = storage.onDidChange((e) => {
      if (e.key === KEY) this.#stored = undefined;
    });
  }

  async get(): Promise<string | undefined> {
    this.#stored ??= this.#read();
    const stored = await this.#stored;
    return stored || process.env.OPENAI_API_KEY || undefined;
  }

  async #read(): Promise<string | undefined> {
    try {
      const stored = await this.storage.get(KEY);
      this.secrets.add(stored, 'the API key');
      return stored;
    } catch (err) {
      this.#stored = undefined;
      throw err;
    }
  }

  dispose(): void {
    this.#listener.dispose();
  }

  async set(): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: 'Candor: Set API Key',
      prompt: 'API key for the provider at candor.baseUrl. Kept in VS Code\'s secret storage.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'Enter a key, or press Escape.' : undefined),
    });
    if (!value) return false;
    this.secrets.add(value, 'the API key');
    this.#stored = undefined;
    await this.storage.store(KEY, value.trim());
    this.#stored = undefined;
    return true;
  }

  /** The cleared key stays in the SecretSet: text already on its way out is still redacted. */
  async clear(): Promise<void> {
    this.#stored = undefined;
    await this.storage.delete(KEY);
    this.#stored = undefined;
  }
}
