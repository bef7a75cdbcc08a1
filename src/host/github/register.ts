import * as vscode from 'vscode';
import type { DisposableStore } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import type { Ports } from '../ports';
import { GITHUB_DOT_COM_API, GitHubTokens } from './tokens';

/** GitHub: the tokens pull requests are opened with, and Set GitHub Token for the API URL in the settings. */
export function registerGitHub(store: DisposableStore, ports: Ports): GitHubTokens {
  const tokens = new GitHubTokens(ports.context.secrets, ports.secrets);
  store.add(registerCommand('candor.setGitHubToken', async () => {
    const apiUrl = ports.settings.read().pullRequests.apiUrl || GITHUB_DOT_COM_API;
    if (await tokens.set(apiUrl)) void vscode.window.showInformationMessage(`Candor: GitHub token saved for ${apiUrl}.`);
  }, ports.notify));
  return tokens;
}
