import * as vscode from 'vscode';
import { promptSource } from '../core/prompt/systemPrompt';
import { appendQueue } from '../core/jsonl';
import { settleGateCgroups } from '../core/sandbox/gateCgroups';
import { DisposableStore } from './platform/lifecycle';
import { createPorts } from './ports';
import type { SavedRant } from './chat/chatController';
import { registerChat } from './chat/register';
import { Approvals } from '../core/approvals/approvals';
import { ToolsHeader } from './chat/toolsHeader';
import { registerCommands } from './commands/register';
import { registerMcp } from './mcp/register';
import { registerWorkspaceGit } from './git/register';
import { registerMemory } from './memory/register';
import { registerPromptEvolution } from './promptEvolution/register';
import { registerEvolution } from './evolution/register';
import { registerGitHub } from './github/register';
import { registerDataFolder } from './dataFolder/register';

/**
 * Builds Candor's services and returns the one disposable that owns them
 * all: the shared ports first, then each feature registers itself against
 * them (docs/architecture.md, "Layout").
 */
export function createServices(context: vscode.ExtensionContext): vscode.Disposable {
  const started = performance.now();
  const store = new DisposableStore();
  const ports = createPorts(context, store);
  const rantSaved = store.add(new vscode.EventEmitter<SavedRant>());
  const memory = registerMemory(store, ports);
  const git = registerWorkspaceGit(store, ports);
  // The review panel names the chat's current session, and the chat needs prompt
  // evolution's traces and prompt first: the session is read through a getter.
  let currentSession = (): string => '';
  const promptEvolution = registerPromptEvolution(store, ports, { currentSession: () => currentSession(), rantSaved: rantSaved.event });
  const prompt = promptSource({ prompt: async () => (await promptEvolution.currentPrompt()).text, memory: () => memory.promptText() });
  const approvals = new Approvals();
  const { chat, proposals, addTools } = registerChat(store, ports, { git, memory, prompt, trace: promptEvolution.traceSink(), rantSaved, approvals });
  const header = store.add(new ToolsHeader(ports.view));
  addTools(registerCommands(store, ports, { approvals, proposals, git, header }));
  addTools(registerMcp(store, ports, { approvals, header }));
  currentSession = () => chat.currentSession.id;
  const evolution = registerEvolution(store, ports, { rantSaved: rantSaved.event, tokens: registerGitHub(store, ports) });
  registerDataFolder(store, ports, { scratchInUse: evolution.isRunning, changed: evolution.changed });
  ports.log.info(`activated in ${Math.round(performance.now() - started)} ms`);
  return store;
}

/**
 * Resolves when every record appended to a session file is on disk, and
 * the cgroups of the gates that ended are removed; for `deactivate`, whose
 * promise VS Code waits for. VS Code disposes the subscriptions in the same
 * turn as it calls `deactivate`: waiting one turn first lets what disposal
 * appends (a stopped reply) join the flush.
 */
export async function flushWrites(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await Promise.all([appendQueue.flushed().catch(() => undefined), settleGateCgroups().catch(() => undefined)]);
}
