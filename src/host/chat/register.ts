import * as vscode from 'vscode';
import { agentTools } from '../../core/tools/agentTools';
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
}

/**
 * The chat: its controller, its tools, its commands and messages, and the
 * refresh when the settings or the workspace's trust change.
 */
export function registerChat(store: DisposableStore, ports: Ports, deps: ChatRegistration): ChatController {
  const { context, settings, view } = ports;
  const proposals = store.add(new EditProposals());
  const tools = agentTools({
    roots: () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    repository: (folder) => deps.git.repository(folder),
    unsaved: vscodeUnsavedBuffers,
    proposeEdit: (proposal, signal) => proposals.propose(proposal, signal),
    remember: (text) => deps.memory.remember(text),
  });
  const chat = store.add(new ChatController({
    ...ports,
    workspaceState: context.workspaceState,
    globalState: context.globalState,
    tools: () => tools,
    prompt: deps.prompt,
    trace: deps.trace,
  }));
  view.router.register('chat', chat.messageHandlers());
  store.add(chat.onDidSaveRant((rant) => deps.rantSaved.fire(rant)));
  for (const d of registerChatCommands({ ...ports, chat })) store.add(d);
  // A new user finds the chat: it shows once, on the first activation after install.
  void view.showOnFirstRun(context.globalState);
  store.add(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('candor')) void confirmWorkspaceUrls(settings).then(() => chat.refresh());
  }));
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => void chat.refresh()));
  void confirmWorkspaceUrls(settings).then(() => chat.refresh());
  return chat;
}
