import { errorMessage } from '../errorMessage';
import type { ApprovalOutcome, Approvals } from '../approvals/approvals';
import type { ToolCall } from '../chat/tools';
import { Tail } from '../sandbox/tail';
import type { SecretSet } from '../redact';
import type { ApprovalAsk } from '../session/records';
import { toolSpec } from '../messages';
import { stringArg, type Tool } from '../tools/toolHost';
import { terminalRefusal } from './commandText';
import { stripAnsi, withoutCutLine } from './commandReport';

/** Where a command runs: its workspace folder, and the folder inside it (both absolute), as the user reads it. */
export interface CommandPlace {
  readonly root: string;
  readonly cwd: string;
  readonly display: string;
}

/** A command's end, as the model and the chat are told of it. */
export interface CommandEnding {
  /** What the model gets: the exit code, the duration, the last lines, and any plain-words explanation. */
  readonly forModel: string;
  /** One line for the chat: `exit 0 in 1.2 s`. */
  readonly outcome: string;
}

export interface CommandToolPorts {
  readonly approvals: Approvals;
  readonly secrets: SecretSet;
  /** `candor.commands.network` is "on". */
  readonly network: () => boolean;
  /** `candor.commands.timeoutSeconds`: the longest a command may run, and the default. */
  readonly timeoutSeconds: () => number;
  /** The folder a call names (a workspace folder's name, or a path inside one); throws when it is outside every folder. */
  readonly place: (folder: string | undefined) => Promise<CommandPlace>;
  /** What allows the line without asking (a remembered Always Allow, a setting's prefix), or undefined. */
  readonly preApproved: (command: string, place: CommandPlace) => string | undefined;
  /** Always Allow: remembered for this workspace (its state, never settings). */
  readonly remember: (prefix: string, place: CommandPlace) => Promise<void>;
  /** Refreshes the view and runs the line in the sandbox over it; `onOutput` gets the raw output as it comes. */
  readonly execute: (command: string, place: CommandPlace, o: { readonly timeoutMs: number; readonly signal: AbortSignal; readonly onOutput: (text: string) => void }) => Promise<CommandEnding>;
  /** Run in Terminal: types the line, not executed, into a terminal in the folder. */
  readonly typeInTerminal: (command: string, place: CommandPlace) => void;
  /** Every byte of output goes here too (the "Candor: Commands" terminal). */
  readonly echo?: (text: string) => void;
  /** The line about to run, before its output in that terminal. */
  readonly echoCommand?: (command: string) => void;
}

/** What the chat entry keeps of the output while it streams: its end. */
const SHOWN_OUTPUT_BYTES = 16 * 1024;
/** The entry is shown again at most this often while output streams. */
const SHOW_EVERY_MS = 200;

export const RUN_COMMAND = 'run_command';

/**
 * `run_command` (docs/architecture.md, "Commands"): every call is shown in
 * the chat and waits for Run, Deny, Always Allow or Run in Terminal, unless
 * a remembered or configured prefix covers it. It runs in the sandbox over
 * the view of the workspace, never in the workspace itself.
 */
export function runCommandTool(ports: CommandToolPorts): Tool {
  return {
    spec: toolSpec(
      RUN_COMMAND,
      'Run a shell command (tests, a build, a linter) in a sandboxed copy of the workspace that includes your pending proposals and the user\'s unsaved changes. The workspace itself is read-only to it; the user approves each command.',
      {
        command: { type: 'string', description: 'The shell line, run with /bin/sh -c' },
        folder: { type: 'string', description: 'A workspace folder name, or a path relative to one (default: the first folder)' },
        timeoutSeconds: { type: 'number', description: 'Stop it after this many seconds (at most the user\'s limit)' },
      },
      ['command'],
    ),
    run: async (args, signal, call) => {
      const command = stringArg(args, 'command');
      if (command.trim() === '') throw new Error('"command" is empty');
      if (!call) throw new Error('run_command runs only in a chat turn');
      const place = await ports.place(typeof args.folder === 'string' ? args.folder : undefined);
      const limit = ports.timeoutSeconds();
      const asked = typeof args.timeoutSeconds === 'number' && Number.isFinite(args.timeoutSeconds) && args.timeoutSeconds > 0 ? args.timeoutSeconds : limit;
      const timeoutMs = Math.round(Math.min(asked, limit) * 1000);
      return runApproved(ports, call, command, place, timeoutMs, signal);
    },
  };
}

async function runApproved(ports: CommandToolPorts, call: ToolCall, command: string, place: CommandPlace, timeoutMs: number, signal: AbortSignal): Promise<string> {
  const ask: ApprovalAsk = { kind: 'command', command, folder: place.display, network: ports.network(), noTerminal: terminalRefusal(command) ?? null };
  const auto = ports.preApproved(command, place);
  let id: string;
  if (auto !== undefined) id = ports.approvals.allowed(call.session, call.turn, ask, auto);
  else {
    const waiting = ports.approvals.ask(call.session, call.turn, ask, signal);
    id = waiting.id;
    const outcome: ApprovalOutcome = await waiting.outcome;
    if (outcome.decision === 'stopped') return 'The user stopped the turn before answering; the command did not run.';
    if (outcome.decision === 'deny') return 'The user declined to run this command. It did not run.';
    if (outcome.decision === 'terminal') {
      if (ask.noTerminal !== null) {
        ports.approvals.update(call.session, id, { decision: 'denied', outcome: `Run in Terminal cannot type this line: ${ask.noTerminal}.` });
        return 'The command did not run.';
      }
      ports.typeInTerminal(command, place);
      return 'The user chose to run this command in their own terminal. Candor did not run it, and its output is not available to you; ask the user what happened if you need to know.';
    }
    if (outcome.decision === 'always') await ports.remember(outcome.prefix ?? command, place);
  }
  return execute(ports, call, id, ask, place, timeoutMs, signal);
}

async function execute(ports: CommandToolPorts, call: ToolCall, id: string, ask: Extract<ApprovalAsk, { kind: 'command' }>, place: CommandPlace, timeoutMs: number, signal: AbortSignal): Promise<string> {
  const shown = new Tail(SHOWN_OUTPUT_BYTES);
  // A cut tail starts mid-line, where the end of a key would escape redaction: that line goes before it is redacted.
  const shownOutput = (): string => ports.secrets.redact(withoutCutLine(shown.text()));
  let lastShown = 0;
  let timer: NodeJS.Timeout | undefined;
  const show = (): void => {
    timer = undefined;
    lastShown = Date.now();
    call.show({ id, kind: 'approval', ask, decision: 'allowed', output: shownOutput() });
  };
  ports.echoCommand?.(ask.command);
  let ending: Awaited<ReturnType<CommandToolPorts['execute']>>;
  try {
    ending = await ports.execute(ask.command, place, {
      timeoutMs,
      signal,
      onOutput: (text) => {
        shown.push(Buffer.from(stripAnsi(text)));
        ports.echo?.(text);
        if (timer === undefined) timer = setTimeout(show, Math.max(0, SHOW_EVERY_MS - (Date.now() - lastShown)));
      },
    });
  } catch (error) {
    // Never left "Running…": the entry says why it did not run, and the model gets the same error.
    ports.approvals.update(call.session, id, { output: shownOutput(), outcome: ports.secrets.redact(`could not run: ${errorMessage(error)}`) });
    throw error;
  } finally {
    clearTimeout(timer);
  }
  // The outcome may quote the output (what the sandbox refused): redacted like it.
  ports.approvals.update(call.session, id, { output: shownOutput(), outcome: ports.secrets.redact(ending.outcome) });
  return ending.forModel;
}
