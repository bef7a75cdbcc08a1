/**
 * The MCP servers' tools as the chat's tool host (docs/architecture.md,
 * "MCP"): each running server's tools under the model names of names.ts,
 * each call shown in the chat and waiting for Allow, Deny or Always Allow
 * (the same Approvals as run_command), unless the user allowed that tool of
 * that definition for good, or it is a read-only tool of the user's own
 * server and candor.mcp.autoApproveReadOnly is on. A workspace server's
 * read-only claim is the repository author's word, so its tools always ask.
 */
import type { ApprovalOutcome, Approvals } from '../approvals/approvals';
import { runOnArgs, type ToolCall, type ToolHost } from '../chat/tools';
import { errorMessage } from '../errorMessage';
import type { ToolSpec } from '../messages';
import type { SecretSet } from '../redact';
import type { ApprovalAsk } from '../session/records';
import { clip, isRecord } from '../text';
import { boundText } from '../workspace/bounded';
import { quoteName } from './display';
import { McpError } from './errors';
import { modelToolNames } from './names';
import type { McpServers, RunningServer } from './servers';
import type { McpTool } from './types';
import { isKindError } from '../kindError';

export interface McpToolPorts {
  readonly approvals: Approvals;
  readonly secrets: SecretSet;
  /** Always Allow, kept by the host in workspace state keyed by server name, tool name and definition hash. */
  isAlwaysAllowed(server: string, tool: string, hash: string): boolean;
  rememberAlways(server: string, tool: string, hash: string): Promise<void>;
  /** candor.mcp.autoApproveReadOnly (a user setting). */
  autoApproveReadOnly(): boolean;
  /** candor.mcp.callTimeoutSeconds, in milliseconds. */
  callTimeoutMs(): number;
}

export type McpToolHost = ToolHost & {
  /** Each server's specs, for the gauge's share of each server. */
  byServer(): ReadonlyMap<string, readonly ToolSpec[]>;
  /** Stops listening to the servers. */
  dispose(): void;
};

/** The most of a tool's description the model is sent (some servers write pages). */
const MAX_DESCRIPTION = 1000;
/** The arguments as the approval card shows them. */
const MAX_ARGS_BYTES = 8 * 1024;
/** A result as the approval record keeps it (the model gets the client's bound). */
const MAX_OUTPUT_BYTES = 16 * 1024;

const READ_ONLY_AUTO = 'read-only tool (candor.mcp.autoApproveReadOnly)';

interface Offered {
  readonly running: RunningServer;
  readonly tool: McpTool;
}

/** What the tool lists give, built once per change. */
interface Built {
  readonly specs: readonly ToolSpec[];
  readonly byServer: ReadonlyMap<string, readonly ToolSpec[]>;
  readonly byName: ReadonlyMap<string, Offered>;
}

export function mcpToolHost(servers: McpServers, ports: McpToolPorts): McpToolHost {
  let built: Built | undefined;
  const subscription = servers.onChanged(() => {
    built = undefined;
  });
  const current = (): Built => (built ??= build(servers.running()));
  return {
    prepare: (signal) => servers.ensureStarted(signal),
    specs: () => current().specs,
    byServer: () => current().byServer,
    run: async (name, rawArgs, signal, call) => {
      const offered = current().byName.get(name);
      if (offered === undefined) return `Error: there is no MCP tool "${clip(name, 100)}" (its server may have stopped). Tools: ${[...current().byName.keys()].join(', ') || 'none'}.`;
      if (call === undefined) return 'Error: MCP tools run only in a chat turn.';
      return runOnArgs(rawArgs, (args) => runApproved(ports, call, offered, args, signal));
    },
    dispose: () => subscription.dispose(),
  };
}

function build(running: readonly RunningServer[]): Built {
  const names = modelToolNames(running.map((r) => ({ server: r.server, tools: r.connection.tools().map((tool) => tool.name) })));
  const byName = new Map<string, Offered>();
  const specByName = new Map<string, ToolSpec>();
  const byServer = new Map<string, ToolSpec[]>();
  for (const r of running) {
    const own: ToolSpec[] = [];
    for (const tool of r.connection.tools()) {
      const name = names.modelName(r.server, tool.name);
      // A server that lists one name twice: the first is offered.
      if (name === undefined || byName.has(name)) continue;
      const spec = toSpec(name, r.server, tool);
      byName.set(name, { running: r, tool });
      specByName.set(name, spec);
      own.push(spec);
    }
    byServer.set(r.server, own);
  }
  // The model sees them in the names' order (sorted), whatever order the servers listed them in.
  const specs = names.names.flatMap((name) => specByName.get(name) ?? []);
  return { specs, byServer, byName };
}

function toSpec(name: string, server: string, tool: McpTool): ToolSpec {
  const description = tool.description.trim() === '' ? `The tool ${quoteName(tool.name)} of the MCP server ${quoteName(server)}.` : clip(tool.description, MAX_DESCRIPTION);
  return { type: 'function', function: { name, description, parameters: objectSchema(tool.inputSchema) } };
}

/** The tool's schema when it describes an object (function arguments are one); otherwise an object of anything. */
function objectSchema(schema: unknown): Record<string, unknown> {
  return isRecord(schema) && schema.type === 'object' ? schema : { type: 'object', properties: {} };
}

async function runApproved(ports: McpToolPorts, call: ToolCall, offered: Offered, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  const { server, hash, source } = offered.running;
  const tool = offered.tool.name;
  const ask: ApprovalAsk = { kind: 'mcp', server, tool, args: boundText(ports.secrets.redact(JSON.stringify(args, null, 2)), MAX_ARGS_BYTES).text };
  let id: string;
  if (ports.isAlwaysAllowed(server, tool, hash)) id = ports.approvals.allowed(call.session, call.turn, ask, alwaysAllowText(server, tool));
  else if (offered.tool.readOnlyHint && source.kind === 'user' && ports.autoApproveReadOnly()) id = ports.approvals.allowed(call.session, call.turn, ask, READ_ONLY_AUTO);
  else {
    const waiting = ports.approvals.ask(call.session, call.turn, ask, signal);
    id = waiting.id;
    const outcome: ApprovalOutcome = await waiting.outcome;
    if (outcome.decision === 'stopped') return 'The user stopped the turn before answering; the tool did not run.';
    if (outcome.decision === 'terminal') {
      // The chat offers no Run in Terminal for an MCP call; a message that says so anyway is a Deny.
      ports.approvals.update(call.session, id, { decision: 'denied', outcome: 'Run in Terminal does not apply to an MCP tool; it did not run.' });
      return DECLINED;
    }
    if (outcome.decision === 'deny') return DECLINED;
    // The user allowed this call whatever happens to the remembering: a store that fails only means the next call asks again.
    if (outcome.decision === 'always') await ports.rememberAlways(server, tool, hash).catch(() => undefined);
  }
  return callTool(ports, call, id, offered, args, signal);
}

const DECLINED = 'The user declined this call; it did not run.';

/** The same words Approvals writes when the user clicks Always Allow, so a remembered call reads as the clicked one did. */
function alwaysAllowText(server: string, tool: string): string {
  return `Always Allow ${JSON.stringify(`${server} ${tool}`)}`;
}

async function callTool(ports: McpToolPorts, call: ToolCall, id: string, offered: Offered, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  const { server, connection } = offered.running;
  const started = performance.now();
  try {
    const result = await connection.call(offered.tool.name, args, { signal, timeoutMs: ports.callTimeoutMs() });
    const output = boundText(ports.secrets.redact(result.text), MAX_OUTPUT_BYTES).text;
    const outcome = result.isError ? 'the server reported an error' : `done in ${seconds(performance.now() - started)}`;
    ports.approvals.update(call.session, id, { output, outcome });
    return result.isError ? `Error (from the server): ${result.text}` : result.text;
  } catch (err) {
    const line = failureLine(server, err, ports.secrets);
    ports.approvals.update(call.session, id, { outcome: line });
    return `Error: ${line}`;
  }
}

/** One line for the model and the chat alike: what happened to the call, in the server's words where it has some. */
function failureLine(server: string, err: unknown, secrets: SecretSet): string {
  const name = `the MCP server ${quoteName(server)}`;
  const said = secrets.redact(errorMessage(err));
  if (!isKindError(err, McpError)) return `${name} failed the call: ${said}`;
  switch (err.kind) {
    case 'crashed':
      return `${name} crashed during the call: ${said}`;
    case 'timeout':
      return `${name} did not answer in time: ${said}`;
    case 'cancelled':
      return `the call to ${name} was cancelled: ${said}`;
    case 'protocol':
      return `${name} answered with an error: ${said}`;
    case 'sign-in':
    case 'http':
    case 'start':
      return `${name} could not take the call: ${said}`;
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
