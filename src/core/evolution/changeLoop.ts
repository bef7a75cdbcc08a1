import type { ToolHost } from '../chat/tools';
import { CUT_CALL_RESULT, cutCall, type ChatMessage } from '../messages';
import type { ChatModel } from '../provider/chatModel';
import { finalReply } from '../provider/finalReply';
import type { Rant } from '../rants';
import type { RantClass } from './classify';
import { throwIfCancelled } from './errors';
import type { SandboxKind } from '../sandbox/sandbox';
import { firstLine } from '../text';

export interface ChangeRequest {
  readonly rant: Rant;
  readonly class: RantClass | null;
  readonly note: string | null;
  readonly maxChangedLines: number;
  readonly maxChangedFiles: number;
  /** Where run_tests runs the model's code; the prompt says so truthfully. */
  readonly sandbox: SandboxKind;
}

export interface ChangeLoopOptions {
  /** Streams each round with its own retry and idle-timeout policy. */
  readonly model: ChatModel;
  readonly tools: ToolHost;
  /** Requests at most. Default 16. */
  readonly maxRounds?: number;
  readonly signal?: AbortSignal;
  /** One line per tool call, for the terminal. */
  readonly onTool?: (line: string) => void;
  /** A retry about to happen, for the terminal. */
  readonly onNotice?: (line: string) => void;
}

export interface ChangeLoopResult {
  /** The model's closing words (its description of the change). */
  readonly summary: string;
  readonly rounds: number;
  readonly toolCalls: number;
  /** True when the round limit stopped the model before it said it was done. */
  readonly outOfRounds: boolean;
}

export function changeSystemPrompt(request: ChangeRequest): string {
  return [
    "You are a coding agent improving yourself: you work in a scratch clone of the agent's own repository (its source code) to address one complaint a user made about the agent.",
    "The complaint is about the agent, not about the user's project: change only the agent's code here.",
    'Make one small, focused change that addresses it, using the tools: read and search the code, then edit with apply_patch or write_file.',
    `Keep the change small: at most ${request.maxChangedLines} changed lines in at most ${request.maxChangedFiles} files; a larger change is rejected.`,
    "Run run_tests before you finish when you can; the change is kept only if the project's tests pass.",
    "Paths are relative to the repository root. The file tools reach only this clone, never its .git folder or its node_modules; Candor measures and commits the change itself.",
    reachOfTests(request.sandbox),
    'When done, reply without tool calls: one short paragraph saying what you changed and why.',
    'If nothing should change, say so and change nothing.',
  ].join('\n');
}

/** What code run by run_tests (the project's commands, and any file they run, yours included) can reach. */
function reachOfTests(sandbox: SandboxKind): string {
  if (sandbox === 'off') {
    return "run_tests runs the configured build and test commands without an OS sandbox (the user turned it off): they, and any code of yours they run, run as the user with the user's files and network, only without Candor's API key.";
  }
  return [
    'run_tests runs the configured build and test commands, and with them any code of yours they run, in an OS sandbox:',
    'no network; the clone writable except .git and node_modules; a throwaway home and temp folder;',
    "the real home folder and Candor's data are hidden; the rest of the disk is read-only; no API key in the environment.",
  ].join(' ');
}

export function changeUserMessage(request: ChangeRequest): string {
  return [
    `Complaint about the agent (rant ${request.rant.id}, ${request.rant.ts}, made while working in the user's project ${request.rant.project}):`,
    request.rant.text,
    '',
    `Triage: ${request.class ?? 'unclassified'}${request.note ? ` — ${request.note}` : ''}`,
  ].join('\n');
}

/** The change phase's tool loop: stream, run the tools asked for, repeat until the model stops asking. */
export async function runChangeLoop(request: ChangeRequest, options: ChangeLoopOptions): Promise<ChangeLoopResult> {
  const maxRounds = options.maxRounds ?? 16;
  const messages: ChatMessage[] = [
    { role: 'system', content: changeSystemPrompt(request) },
    { role: 'user', content: changeUserMessage(request) },
  ];
  const specs = options.tools.specs();
  const signal = options.signal ?? new AbortController().signal;
  let toolCalls = 0;
  for (let round = 1; round <= maxRounds; round++) {
    throwIfCancelled(options.signal);
    const reply = await finalReply(options.model.stream({ messages, tools: specs }, { signal: options.signal }), {
      onRetry: (n) => options.onNotice?.(`retry ${n.attempt} of ${n.of} in ${Math.round(n.delayMs / 1000)} s: ${n.error.describe()}`),
    });
    if (reply.toolCalls.length > 0 && reply.finishReason === 'length') {
      // Cut at the output limit: no call of it is run, and none goes back as it came (docs/architecture.md, "Model port").
      messages.push({ role: 'assistant', content: reply.content === '' ? null : reply.content, tool_calls: reply.toolCalls.map(cutCall) });
      for (const call of reply.toolCalls) {
        options.onTool?.(`${call.function.name}: cut at the output limit, not run`);
        messages.push({ role: 'tool', tool_call_id: call.id, content: CUT_CALL_RESULT });
      }
      continue;
    }
    if (reply.toolCalls.length === 0) return { summary: reply.content.trim(), rounds: round, toolCalls, outOfRounds: false };
    messages.push({ role: 'assistant', content: reply.content === '' ? null : reply.content, tool_calls: reply.toolCalls });
    for (const call of reply.toolCalls) {
      throwIfCancelled(options.signal);
      toolCalls++;
      const result = await options.tools.run(call.function.name, call.function.arguments, signal);
      options.onTool?.(`${call.function.name}(${preview(call.function.arguments)}) → ${firstLine(result, 120)}`);
      messages.push({ role: 'tool', tool_call_id: call.id, content: result });
    }
  }
  return { summary: '', rounds: maxRounds, toolCalls, outOfRounds: true };
}

function preview(args: string): string {
  const flat = args.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
}
