import * as vscode from 'vscode';
import { agentTools } from '../../core/tools/agentTools';
import { joinToolHosts } from '../../core/tools/toolHost';
import type { ToolHost } from '../../core/chat/tools';
import type { Approvals } from '../../core/approvals/approvals';
import type { PromptSource } from '../../core/prompt/systemPrompt';
import type { RequestTrace } from '../../core/chat/ports';
import type { DisposableStore } from '../platform/lifecycle';
import type { Ports } from '../ports';
import { confirmWorkspaceUrls } from '../settings/config';
import { vscodeUnsavedBuffers, type WorkspaceGit } from '../git/workspaceGit';
import type { MemoryFeature } from '../memory/memory';
import { ChatController, type SavedRant } from './chatController';
import { registerChatCommands } from './commands';
import { EditProposals } from './proposeEdit';

export interface ChatRegistration {
  readonly git: WorkspaceGit;
  readonly memory: MemoryFeature;
  readonly prompt: PromptSource;
  /** Every request that ended (the prompt-evolution trace store). */
  readonly trace: (trace: RequestTrace) => void;
  /** Fired for each rant saved, from the chat or the palette. */
  readonly rantSaved: vscode.EventEmitter<SavedRant>;
  /** Calls that wait for the user: commands, MCP tools. */
  readonly approvals: Approvals;
}

/** What other features get of the chat. */
export interface ChatFeature {
  readonly chat: ChatController;
  readonly proposals: EditProposals;
  /** Adds a tool set (run_command, an MCP server's tools) beside the built-in ones. */
  addTools(host: ToolHost): void;
}

/**
 * The chat: its controller, its tools, its commands and messages, and the
 * refresh when the settings or the workspace's trust change.
 */
export function registerChat(store: DisposableStore, ports: Ports, deps: ChatRegistration): ChatFeature {
  const { context, settings, view } = ports;
  let current = (): ChatController | undefined => undefined;
  const proposals = store.add(new EditProposals(() => current()?.loadedSession, ports.log));
  const builtIn = agentTools({
    roots: () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    repository: (folder) => deps.git.repository(folder),
    unsaved: vscodeUnsavedBuffers,
    proposeEdit: (proposal, call) => proposals.propose(proposal, call),
    remember: (text) => deps.memory.remember(text),
  });
  const more: ToolHost[] = [];
  const tools = joinToolHosts(() => [builtIn, ...more]);
  const chat = store.add(new ChatController({
    ...ports,
    workspaceState: context.workspaceState,
    globalState: context.globalState,
    tools: () => tools,
    prompt: deps.prompt,
    trace: deps.trace,
    // Calls a closed window left waiting are written as stopped: no button that does nothing.
    sessionLoaded: (session) => deps.approvals.settleOrphans(session),
  }));
  current = () => chat;
  view.router.register('chat', chat.messageHandlers());
  view.router.register('proposals', { proposal: (message) => proposals.answer(message) });
  view.router.register('approvals', {
    approval: (message) => {
      if (!deps.approvals.answer(message.id, { decision: message.decision, ...(message.prefix !== undefined ? { prefix: message.prefix } : {}) })) {
        void vscode.window.showInformationMessage('Candor: that call is no longer waiting for an answer (its turn ended).');
      }
    },
  });
  store.add(chat.onDidSaveRant((rant) => deps.rantSaved.fire(rant)));
  for (const d of registerChatCommands({ ...ports, chat })) store.add(d);
  // A new user finds the chat: it shows once, on the first activation after install.
  void view.showOnFirstRun(context.globalState);
  store.add(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('candor')) void confirmWorkspaceUrls(settings).then(() => chat.refresh());
  }));
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => void chat.refresh()));
  void confirmWorkspaceUrls(settings).then(() => chat.refresh());
  return { chat, proposals, addTools: (host) => void more.push(host) };
}
