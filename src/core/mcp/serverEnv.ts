/**
 * The environment a local MCP server starts with (docs/architecture.md,
 * "MCP"): an allow-list, like every process Candor starts, not the host's
 * whole environment as VS Code passes it. A server gets what any program
 * needs to run, and exactly the variables its definition names; a token it
 * needs is written into its `env` (usually as `${input:…}`), never inherited.
 */
import { childEnvironment, type ChildEnvironment } from '../process/environment';

/**
 * Beyond CORE_NAMES (PATH, locale, time zone, terminal): a home and a user,
 * because `npx`, `uvx`, `pip` and `git` keep caches and config there and
 * fail without one; a temp folder; and on Windows the profile folders npm
 * needs. Left out on purpose: SHELL (no server needs to pick a shell; npm
 * runs scripts with /bin/sh), XDG_RUNTIME_DIR (the folder of the session's
 * agent and bus sockets), and the proxy variables (their URLs carry
 * passwords; a definition that needs one names it: `"HTTPS_PROXY":
 * "${env:HTTPS_PROXY}"`).
 */
const MCP_SERVER_NAMES: readonly string[] = ['HOME', 'USER', 'LOGNAME', 'TMPDIR', 'TMP', 'TEMP', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA'];

export interface McpServerEnvironmentOptions {
  /** The definition's `env` (its envFile beneath it), already expanded: set verbatim, over any inherited variable of the same name. */
  readonly definitionEnv: Readonly<Record<string, string>>;
  /** Values no inherited variable may hold (the key from SecretStorage). */
  readonly withhold: readonly string[];
  /** Default: this process's environment. */
  readonly base?: NodeJS.ProcessEnv;
}

export function mcpServerEnvironment(o: McpServerEnvironmentOptions): ChildEnvironment {
  return childEnvironment({ use: 'an MCP server', names: MCP_SERVER_NAMES, extraNames: [], set: { ...o.definitionEnv }, withhold: o.withhold, base: o.base });
}
