/**
 * MCP servers as Candor sees them (docs/architecture.md, "MCP"): defined
 * the way VS Code defines them (the user's `mcp` setting, a folder's
 * `.vscode/mcp.json`), expanded once the variables are known, then
 * connected through the official SDK.
 */

/** Where a definition came from: the user's own settings, or a workspace folder (which needs trust and a confirmation). */
export type McpSource = { readonly kind: 'user' } | { readonly kind: 'workspace'; readonly folder: string; readonly file: string };

/** One `inputs` entry: `${input:<id>}` asks for it once. */
export interface McpInput {
  readonly id: string;
  readonly description: string;
  readonly password: boolean;
  readonly default?: string;
}

/** A server entry as written, before any variable is expanded. */
export type McpServerDefinition =
  | {
      readonly name: string;
      readonly source: McpSource;
      readonly type: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      readonly envFile?: string;
      readonly cwd?: string;
    }
  | {
      readonly name: string;
      readonly source: McpSource;
      /** `auto`: `type` was absent and `url` given: Streamable HTTP, then the legacy SSE transport. */
      readonly type: 'http' | 'sse' | 'auto';
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
    };

/** A definition with its variables expanded: what is started or connected. */
export type ExpandedServer =
  | {
      readonly name: string;
      readonly type: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      /** The whole environment the process gets (the allow-list plus what the definition names). */
      readonly env: Readonly<Record<string, string>>;
      /** The names of `env` the definition set (its `env` and its envFile); the rest came through the allow-list. */
      readonly definedEnv?: readonly string[];
      readonly cwd?: string;
    }
  | {
      readonly name: string;
      readonly type: 'http' | 'sse' | 'auto';
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
    };

/** A tool a server offers, as listed. */
export interface McpTool {
  readonly name: string;
  readonly description: string;
  /** The JSON schema of its arguments, as the server gave it. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** The server's own claim that the tool only reads (annotations.readOnlyHint). */
  readonly readOnlyHint: boolean;
}

/** One call's result, already bounded and redacted. */
export interface McpCallResult {
  /** The server said the call failed (`isError`). */
  readonly isError: boolean;
  /** Text content joined; images and resources named with their size. */
  readonly text: string;
  /** Bytes of the content before bounding. */
  readonly bytes: number;
}
