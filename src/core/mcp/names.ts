/**
 * The names the model calls MCP tools by (docs/architecture.md, "MCP"):
 * `mcp_<server>_<tool>`, in the characters every provider accepts for a
 * function name (`[A-Za-z0-9_-]`, at most 64). The `mcp_` prefix keeps them
 * apart from Candor's own tools. Folding characters and clipping can make two
 * tools one name; the later one (in sorted order, not in listing order, so a
 * server answering in another order changes nothing) gets `_2`, `_3`, … within
 * the 64. Names are compared without case, as some models confuse
 * `mcp_A_x` and `mcp_a_x`.
 */

const MAX_TOOL_NAME = 64;

export interface McpToolRef {
  readonly server: string;
  readonly tool: string;
}

export interface ToolNameMap {
  /** Every model name, in sorted order of server and tool. */
  readonly names: readonly string[];
  /** The server's tool a model name stands for. */
  resolve(modelName: string): McpToolRef | undefined;
  /** The model name of a server's tool. */
  modelName(server: string, tool: string): string | undefined;
}

export function modelToolNames(servers: ReadonlyArray<{ readonly server: string; readonly tools: readonly string[] }>): ToolNameMap {
  const refs = uniqueRefs(servers);
  const wanted = refs.map((ref) => baseName(ref));
  const wantedBy = new Map<string, number>();
  for (const name of wanted) wantedBy.set(name.toLowerCase(), (wantedBy.get(name.toLowerCase()) ?? 0) + 1);
  // A name only one tool wants is its own; then the first of each clash keeps its name; then the others get a suffix.
  const taken = new Set<string>();
  const names: Array<string | undefined> = wanted.map(() => undefined);
  const assign = (i: number, name: string): void => {
    taken.add(name.toLowerCase());
    names[i] = name;
  };
  wanted.forEach((name, i) => {
    if (wantedBy.get(name.toLowerCase()) === 1) assign(i, name);
  });
  wanted.forEach((name, i) => {
    if (names[i] === undefined && !taken.has(name.toLowerCase())) assign(i, name);
  });
  wanted.forEach((name, i) => {
    if (names[i] === undefined) assign(i, withSuffix(name, taken));
  });
  const byName = new Map<string, McpToolRef>();
  const byRef = new Map<string, string>();
  refs.forEach((ref, i) => {
    const name = names[i] ?? '';
    byName.set(name, ref);
    byRef.set(refKey(ref.server, ref.tool), name);
  });
  return {
    names: names.map((name) => name ?? ''),
    resolve: (modelName) => byName.get(modelName),
    modelName: (server, tool) => byRef.get(refKey(server, tool)),
  };
}

/** Each server's tool once, sorted by server then tool (code unit order: the same on every machine). */
function uniqueRefs(servers: ReadonlyArray<{ readonly server: string; readonly tools: readonly string[] }>): McpToolRef[] {
  const seen = new Map<string, McpToolRef>();
  for (const { server, tools } of servers) for (const tool of tools) seen.set(refKey(server, tool), { server, tool });
  return [...seen.values()].sort((a, b) => compare(a.server, b.server) || compare(a.tool, b.tool));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A key no pair of strings shares with another pair. */
function refKey(server: string, tool: string): string {
  return JSON.stringify([server, tool]);
}

/** `mcp_<server>_<tool>`, one `_` for each character outside the allowed set, clipped. */
function baseName(ref: McpToolRef): string {
  return `mcp_${ref.server}_${ref.tool}`.replace(/[^A-Za-z0-9_-]/gu, '_').slice(0, MAX_TOOL_NAME);
}

/** `name_2`, `name_3`, …: the first not taken, clipped so that the suffix fits. */
function withSuffix(name: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${name.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}
