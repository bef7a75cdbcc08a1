import type { ToolCall, ToolHost } from '../chat/tools';
import type { ReadOnlyGit } from '../git/guard';
import type { UnsavedBufferSource } from '../git/unsaved';
import { rememberToolSpec } from '../memory/memory';
import { gitDiffTool, gitLogTool, gitStatusTool, listFiles, readFile, searchText } from '../workspace';
import { toolSpec } from '../messages';
import { stringArg, toolHost, type Tool } from './toolHost';

/** An edit the agent proposes; the host shows it and the user accepts or rejects it. */
export interface EditProposal {
  /** Workspace-relative path, as the model gave it. */
  readonly path: string;
  /** Replace exactly this text (must occur once in the current buffer)… */
  readonly oldText?: string;
  readonly newText?: string;
  /** …or set the whole file's content (a new file, or a rewrite). */
  readonly content?: string;
}

export interface AgentToolPorts {
  /** Workspace folder roots (absolute). */
  readonly roots: () => readonly string[];
  /** The guard of the repository holding a folder (the first folder when none is named). */
  readonly repository: (folder?: string) => Promise<ReadOnlyGit | undefined>;
  readonly unsaved: UnsavedBufferSource;
  /** Records the proposal, pending the user's decision in the chat, and returns at once what to tell the model. */
  readonly proposeEdit?: (proposal: EditProposal, call: ToolCall | undefined) => Promise<string>;
  /** Appends a dated note to the workspace memory. */
  readonly remember?: (text: string) => Promise<string>;
}

/**
 * The chat's tools: reads confined to the workspace folders, git reads through
 * the guard, edits only as proposals through the editor. Every output is
 * bounded and says so when it was cut.
 */
export function agentTools(ports: AgentToolPorts): ToolHost {
  return toolHost([...readTools(ports), ...gitTools(ports), ...proposeTools(ports), ...memoryTools(ports)]);
}

function readTools(ports: AgentToolPorts): Tool[] {
  return [
    {
      spec: toolSpec('read_file', 'Read a text file of the workspace (bounded; says when it was cut).', { path: { type: 'string', description: 'Path relative to a workspace folder' } }, ['path']),
      run: async (args) => {
        const result = await readFile(ports.roots(), stringArg(args, 'path'));
        return `${result.path} (${result.totalBytes} bytes)\n${result.text}`;
      },
    },
    {
      spec: toolSpec('list_files', 'List the files and folders under a workspace path.', { path: { type: 'string', description: 'Folder, relative; "." for the root' } }),
      run: async (args) => (await listFiles(ports.roots(), stringArg(args, 'path', '.'))).text,
    },
    {
      spec: toolSpec('search_text', 'Search the workspace files for a text (case-insensitive).', { query: { type: 'string' }, path: { type: 'string', description: 'Only under this folder' } }, ['query']),
      run: async (args) => (await searchText(ports.roots(), stringArg(args, 'query'), { dir: typeof args.path === 'string' ? args.path : undefined })).text,
    },
  ];
}

function gitTools(ports: AgentToolPorts): Tool[] {
  const repo = async (args: Record<string, unknown>): Promise<ReadOnlyGit> => {
    const found = await ports.repository(typeof args.folder === 'string' ? args.folder : undefined);
    if (!found) throw new Error('This workspace folder is not a git repository (or git is not installed).');
    return found;
  };
  return [
    {
      spec: toolSpec('git_status', 'The git status of the workspace repository, including unsaved editor buffers.', { folder: { type: 'string' } }),
      run: async (args) => (await gitStatusTool(await repo(args), { unsaved: ports.unsaved })).text,
    },
    {
      spec: toolSpec('git_diff', 'Staged and unstaged changes of the workspace repository.', { which: { type: 'string', enum: ['staged', 'unstaged', 'both'] }, folder: { type: 'string' } }),
      run: async (args) => {
        const which = args.which === 'staged' || args.which === 'unstaged' ? args.which : 'both';
        return (await gitDiffTool(await repo(args), { which })).text;
      },
    },
    {
      spec: toolSpec('git_log', 'Recent commits of the workspace repository.', { count: { type: 'number' }, folder: { type: 'string' } }),
      run: async (args) => (await gitLogTool(await repo(args), { maxCount: typeof args.count === 'number' ? Math.max(1, Math.min(100, Math.floor(args.count))) : 20 })).text,
    },
  ];
}

function proposeTools(ports: AgentToolPorts): Tool[] {
  const propose = ports.proposeEdit;
  if (!propose) return [];
  return [{
    spec: toolSpec(
      'propose_edit',
      'Propose an edit to a workspace file. It stays pending while you go on: the user sees its diff in the chat and accepts or rejects it when they choose, and commands you run see it already. Give old_text and new_text to replace one exact passage, or content for a whole new file. A second proposal for the same file builds on the pending one.',
      { path: { type: 'string' }, old_text: { type: 'string' }, new_text: { type: 'string' }, content: { type: 'string' } },
      ['path'],
    ),
    run: async (args, _signal, call) => {
      const proposal: EditProposal = {
        path: stringArg(args, 'path'),
        oldText: typeof args.old_text === 'string' ? args.old_text : undefined,
        newText: typeof args.new_text === 'string' ? args.new_text : undefined,
        content: typeof args.content === 'string' ? args.content : undefined,
      };
      if (proposal.content === undefined && (proposal.oldText === undefined || proposal.newText === undefined)) {
        throw new Error('give old_text and new_text, or content');
      }
      return propose(proposal, call);
    },
  }];
}

function memoryTools(ports: AgentToolPorts): Tool[] {
  const remember = ports.remember;
  return remember ? [{ spec: rememberToolSpec, run: async (args) => remember(stringArg(args, 'text')) }] : [];
}
