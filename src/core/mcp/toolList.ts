import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import type { McpTool } from './types';

/** A server that keeps handing out cursors is cut off here, with a warning: its first pages are used. */
const MAX_PAGES = 50;
const MAX_TOOLS = 1000;

interface ListOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs: number;
  readonly secrets: SecretSet;
  readonly log: Logger;
  /** Prefix of log lines ("mcp github:"). */
  readonly prefix: string;
}

/**
 * Every tool of the server, page by page (`nextCursor`). `tools/list` is
 * sent as a plain request rather than through the SDK's `listTools`, which
 * caches output-schema validators for the last page only; Candor shows a
 * tool's content, not its structured output, so it validates none.
 * Descriptions are redacted: they go to the model.
 */
export async function listAllTools(client: Client, o: ListOptions): Promise<McpTool[]> {
  const tools = new Map<string, McpTool>();
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, { signal: o.signal, timeout: o.timeoutMs });
    for (const tool of result.tools) add(tools, tool, o);
    cursor = result.nextCursor;
    if (cursor === undefined || tools.size >= MAX_TOOLS) return [...tools.values()].slice(0, MAX_TOOLS);
    if (seenCursors.has(cursor)) {
      o.log.warn(`${o.prefix} tools/list handed out a cursor twice; the tools listed so far are used`);
      return [...tools.values()];
    }
    seenCursors.add(cursor);
  }
  o.log.warn(`${o.prefix} tools/list has more than ${MAX_PAGES} pages; the tools of the first ${MAX_PAGES} are used`);
  return [...tools.values()];
}

function add(tools: Map<string, McpTool>, tool: Tool, o: ListOptions): void {
  if (tools.has(tool.name)) {
    o.log.warn(`${o.prefix} lists the tool ${JSON.stringify(tool.name.slice(0, 100))} twice; the first is used`);
    return;
  }
  tools.set(tool.name, {
    name: tool.name,
    description: o.secrets.redact(tool.description ?? ''),
    inputSchema: tool.inputSchema,
    readOnlyHint: tool.annotations?.readOnlyHint === true,
  });
}
