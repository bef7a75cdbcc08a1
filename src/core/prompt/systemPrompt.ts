/**
 * The system prompt: the prompt version's text, then the workspace memory,
 * then the tool list, always in that order and with no timestamps, so the
 * prefix is byte-stable while its inputs do not change and never shifts the
 * context estimate from one request to the next.
 */

export const BUILT_IN_PROMPT = [
  'You are Candor, a coding assistant inside VS Code.',
  'Be direct and honest: say what you know, what you do not, and what you did.',
  'Use the tools to read the workspace before you answer questions about it.',
  'Propose edits with propose_edit; each stays pending while you go on, and the user accepts or rejects it in the chat.',
  'Never suggest commands that discard the user\'s uncommitted work.',
].join('\n');

/** Said whenever run_command is offered; the same words every time, so the prompt stays byte-stable. */
export const COMMAND_RULES = [
  '## Commands',
  'run_command runs a shell line in a sandboxed copy of the workspace: it sees your pending proposals and the user\'s unsaved changes, so you can test an edit before the user accepts it.',
  'The workspace itself is read-only to commands: nothing they write reaches the user\'s files, and their changes are not kept for the user. Make changes with propose_edit.',
  'The user approves each command; one they decline did not run. Commands have no network unless the user turned it on.',
].join('\n');

export interface SystemPromptInputs {
  readonly prompt: string;
  readonly memory?: string;
  readonly toolNames: readonly string[];
}

/** One request's system message, and the prompt it was built from. */
export interface SystemPrompt {
  /** The system message as sent. */
  readonly text: string;
  /** The prompt's own text (built in, or `.candor/prompt.md`), before memory and tools: the registry knows its versions by it. */
  readonly prompt: string;
}

/** Built once per request; the tool list is exactly the tools that request sends (none in an untrusted workspace). */
export function buildSystemPrompt(inputs: SystemPromptInputs): SystemPrompt {
  const parts = [inputs.prompt.trim()];
  if (inputs.memory && inputs.memory.trim() !== '') {
    parts.push('## Workspace memory (notes you saved earlier with the remember tool)\n' + inputs.memory.trim());
  }
  if (inputs.toolNames.length > 0) parts.push('## Tools\n' + [...inputs.toolNames].sort().join(', '));
  if (inputs.toolNames.includes('run_command')) parts.push(COMMAND_RULES);
  return { text: parts.join('\n\n'), prompt: inputs.prompt };
}

/**
 * Where the chat gets each request's system prompt: the host's prompt
 * evolution and memory features stand behind it (docs/architecture.md,
 * "One message, end to end").
 */
export interface PromptSource {
  /** Built once per request, for exactly the tools that request sends. */
  systemPrompt(toolNames: readonly string[]): Promise<SystemPrompt>;
}

/** The system prompt of the prompt version in use and the workspace memory, read anew for each request. */
export function promptSource(parts: { prompt(): Promise<string>; memory(): Promise<string | undefined> }): PromptSource {
  return {
    systemPrompt: async (toolNames) => buildSystemPrompt({ prompt: await parts.prompt(), memory: await parts.memory(), toolNames }),
  };
}
