import * as vscode from 'vscode';

const KEY = 'candor.apiKey';

/** The API key: SecretStorage first, then OPENAI_API_KEY. Never in settings, logs or data files. */
export class ApiKeys {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async get(): Promise<string | undefined> {
    return (await this.secrets.get(KEY)) || process.env.OPENAI_API_KEY || undefined;
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
    await this.secrets.store(KEY, value.trim());
    return true;
  }

  async clear(): Promise<void> {
    await this.secrets.delete(KEY);
  }

  onDidChange(listener: () => void): vscode.Disposable {
    return this.secrets.onDidChange((e) => {
      if (e.key === KEY) listener();
    });
  }
}
