/** The bounds every MCP connection keeps (docs/architecture.md, "MCP"). */

/** The largest message Candor reads from a server, over any transport: a larger one fails, so nothing huge is held. */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** How much text of one call's result is returned, at most. */
export const DEFAULT_RESULT_BYTES = 64 * 1024;

/** How long starting a server and getting through initialize may take. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
