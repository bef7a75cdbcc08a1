import * as vscode from 'vscode';
import type { SecretSet } from '../../core/redact';

const KEY = 'candor.apiKey';

/**
 * The API key: SecretStorage first, then OPENAI_API_KEY. Never in settings,
 * logs or data files: every key it reads or stores joins the extension host's
 * SecretSet, so the one redaction pass removes it from then on
 * (docs/architecture.md, "Secrets").
 */
export class ApiKeys {
  constructor(
    private readonly storage: vscode.SecretStorage,
    /** The extension host's one SecretSet (it already holds OPENAI_API_KEY). */
    readonly secrets: SecretSet,
  ) {}

  async get(): Promise<string | undefined> {
    const stored = await this.storage.get(KEY);
    this.secrets.add(stored);
    return stored || process.env.OPENAI_API_KEY || undefined;
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
    this.secrets.add(value);
    await this.storage.store(KEY, value.trim());
    return true;
  }

  /** The cleared key stays in the SecretSet: text already on its way out is still redacted. */
  async clear(): Promise<void> {
    await this.storage.delete(KEY);
  }
}
