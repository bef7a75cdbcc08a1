import * as vscode from 'vscode';
import type { SecretSet } from '../../core/redact';

/** The one API URL for which VS Code's own `github` sign-in is used. */
export const GITHUB_DOT_COM_API = 'https://api.github.com';
const STORED_PREFIX = 'candor.githubToken:';

/**
 * GitHub tokens for pull requests (docs/architecture.md, "Secrets"): VS
 * Code's `github` session for `https://api.github.com` only, its
 * `github-enterprise` session for the enterprise host VS Code is set up
 * for, or a token the user stored for that API URL with Set GitHub Token.
 * Each token joins the redaction set as soon as it is read; none is ever
 * written to a file, a log or a child's environment.
 */
export class GitHubTokens {
  constructor(
    private readonly storage: vscode.SecretStorage,
    private readonly secrets: SecretSet,
  ) {}

  /** A token for `apiUrl`; `interactive` (a command the user ran) may ask VS Code to sign in to github.com. */
  async get(apiUrl: string, interactive: boolean): Promise<string | undefined> {
    const token = (await this.session(apiUrl, interactive)) ?? (await this.storage.get(STORED_PREFIX + apiUrl));
    this.secrets.add(token, 'a GitHub token');
    return token || undefined;
  }

  /** `Candor: Set GitHub Token`: stores a token for one API URL. */
  async set(apiUrl: string): Promise<boolean> {
    const value = await vscode.window.showInputBox({
      title: 'Candor: Set GitHub Token',
      prompt: `A GitHub token for ${apiUrl}, with the repo scope (or contents and pull requests: write). Kept in VS Code's secret storage.`,
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' || /\s/.test(v.trim()) ? 'Enter a token (no spaces), or press Escape.' : undefined),
    });
    if (!value) return false;
    this.secrets.add(value.trim(), 'a GitHub token');
    await this.storage.store(STORED_PREFIX + apiUrl, value.trim());
    return true;
  }

  private async session(apiUrl: string, interactive: boolean): Promise<string | undefined> {
    try {
      if (apiUrl === GITHUB_DOT_COM_API) {
        const silent = await vscode.authentication.getSession('github', ['repo'], { silent: true });
        if (silent) return silent.accessToken;
        // Asked only when no token is stored and the user ran the command.
        if (!interactive || (await this.storage.get(STORED_PREFIX + apiUrl))) return undefined;
        return (await vscode.authentication.getSession('github', ['repo'], { createIfNone: true })).accessToken;
      }
      if (!enterpriseHostIs(apiUrl)) return undefined;
      return (await vscode.authentication.getSession('github-enterprise', ['repo'], { silent: true }))?.accessToken;
    } catch {
      // No provider (code-server without GitHub sign-in), or the user said no: the stored token, if any.
      return undefined;
    }
  }
}

/** VS Code's github-enterprise provider signs in to `github-enterprise.uri`: its token goes only to an API of that host. */
function enterpriseHostIs(apiUrl: string): boolean {
  const configured = vscode.workspace.getConfiguration('github-enterprise').inspect<string>('uri')?.globalValue;
  try {
    return configured !== undefined && new URL(configured).host === new URL(apiUrl).host;
  } catch {
    return false;
  }
}
