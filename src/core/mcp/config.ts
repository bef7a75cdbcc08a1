/**
 * MCP server definitions read the way VS Code 1.100 reads them (the user's
 * `mcp` setting, a folder's `.vscode/mcp.json`; docs/architecture.md, "MCP"):
 * `{ "servers": { "<name>": entry }, "inputs": [ … ] }`. Every entry is
 * checked on its own: one that does not fit gives a problem line naming the
 * server and what is wrong, and is skipped; the others still load. Nothing
 * here throws, whatever the value. Unknown fields are ignored, as VS Code
 * ignores them.
 */
import { isRecord } from '../text';
import { hasInvisible, quoteName } from './display';
import { parseJsonc } from './jsonc';
import type { McpInput, McpServerDefinition, McpSource } from './types';
import { KindError, isKindError } from '../kindError';

export interface McpConfig {
  readonly servers: McpServerDefinition[];
  readonly inputs: McpInput[];
  /** One line per thing skipped, for the output channel. */
  readonly problems: string[];
}

/** A `.vscode/mcp.json` file's text (JSON with comments and trailing commas). */
export function parseMcpConfigText(text: string, source: McpSource): McpConfig {
  const parsed = parseJsonc(text);
  if (!parsed.ok) return { servers: [], inputs: [], problems: [`MCP configuration: ${parsed.reason}`] };
  return parseMcpConfig(parsed.value, source);
}

/** The `mcp` setting's value, or a parsed `mcp.json`. Absent (undefined, null) is an empty configuration. */
export function parseMcpConfig(value: unknown, source: McpSource): McpConfig {
  const config: McpConfig = { servers: [], inputs: [], problems: [] };
  if (value === undefined || value === null) return config;
  if (!isRecord(value)) {
    config.problems.push('MCP configuration: not an object with "servers" and "inputs"');
    return config;
  }
  readServers(value.servers, source, config);
  readInputs(value.inputs, config);
  return config;
}

/** What is wrong with an entry or one of its fields; caught per entry. */
class EntryProblem extends KindError<'skipped'> {
  override readonly name = 'EntryProblem';

  constructor(message: string) {
    super('skipped', message);
  }
}

function readServers(servers: unknown, source: McpSource, config: McpConfig): void {
  if (servers === undefined) return;
  if (!isRecord(servers)) {
    config.problems.push('MCP configuration: "servers" is not an object');
    return;
  }
  for (const [name, entry] of Object.entries(servers)) {
    const problems: string[] = [];
    try {
      config.servers.push(readServer(name, entry, source, problems));
    } catch (err) {
      if (!isKindError(err, EntryProblem)) throw err;
      problems.push(`${err.message}; the server is skipped`);
    }
    for (const problem of problems) config.problems.push(`MCP server ${quoteName(name)}: ${problem}`);
  }
}

/** One entry; minor faults (an env variable of the wrong type) go to `problems`, a fatal one throws EntryProblem. */
function readServer(name: string, entry: unknown, source: McpSource, problems: string[]): McpServerDefinition {
  if (name.trim() === '') throw new EntryProblem('the name is empty');
  if (!isRecord(entry)) throw new EntryProblem('not an object');
  const type = serverType(entry);
  if (type === 'stdio') {
    const envFile = optionalPath(entry, 'envFile');
    const cwd = optionalPath(entry, 'cwd');
    return {
      name,
      source,
      type,
      command: command(entry.command),
      args: args(entry.args),
      env: env(entry.env, problems),
      ...(envFile === undefined ? {} : { envFile }),
      ...(cwd === undefined ? {} : { cwd }),
    };
  }
  return { name, source, type, url: url(entry.url), headers: headers(entry.headers) };
}

/** `type` as written, or what the fields imply: `command` is stdio, `url` is HTTP with the SSE fallback. */
function serverType(entry: Record<string, unknown>): 'stdio' | 'http' | 'sse' | 'auto' {
  const type = entry.type;
  if (type === 'stdio' || type === 'http' || type === 'sse') return type;
  if (type !== undefined) throw new EntryProblem(`"type" is ${describe(type)}; it must be "stdio", "http" or "sse"`);
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand && hasUrl) throw new EntryProblem('it has both "command" and "url" and no "type" to say which');
  if (hasCommand) return 'stdio';
  if (hasUrl) return 'auto';
  throw new EntryProblem('it has neither "command" (a local server) nor "url" (a remote one)');
}

function command(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new EntryProblem('"command" must be a non-empty string');
  // A newline or a bidi override in the program's name would make the confirmation show something else than what runs.
  if (hasInvisible(value)) throw new EntryProblem('"command" holds a control or invisible character');
  return value;
}

function args(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new EntryProblem('"args" must be an array of strings');
  return value.map((arg, i) => {
    const text = typeof arg === 'number' ? String(arg) : arg;
    if (typeof text !== 'string') throw new EntryProblem(`"args"[${i}] is ${describe(arg)}, not a string`);
    if (text.includes('\0')) throw new EntryProblem(`"args"[${i}] holds a NUL character`);
    return text;
  });
}

/** `env`: strings as they are, numbers as strings; a variable of another type (null included) is left out with a problem. */
function env(value: unknown, problems: string[]): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new EntryProblem('"env" must be an object of strings');
  const entries: Array<[string, string]> = [];
  for (const [name, raw] of Object.entries(value)) {
    const text = typeof raw === 'number' ? String(raw) : raw;
    if (name === '' || name.includes('=') || name.includes('\0')) problems.push(`"env" has a variable named ${quoteName(name)}, which no process can have; it is left out`);
    else if (typeof text !== 'string') problems.push(`"env".${quoteName(name)} is ${describe(raw)}, not a string; it is left out`);
    else if (text.includes('\0')) problems.push(`"env".${quoteName(name)} holds a NUL character; it is left out`);
    else entries.push([name, text]);
  }
  // fromEntries defines own properties: a variable named __proto__ stays a variable.
  return Object.fromEntries(entries);
}

function optionalPath(entry: Record<string, unknown>, field: 'envFile' | 'cwd'): string | undefined {
  const value = entry[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new EntryProblem(`"${field}" must be a non-empty string`);
  if (value.includes('\0')) throw new EntryProblem(`"${field}" holds a NUL character`);
  return value;
}

function url(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new EntryProblem('"url" must be a non-empty string');
  if (hasInvisible(value)) throw new EntryProblem('"url" holds a control or invisible character');
  return value;
}

/** The characters of an HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `headers`: a value with a line break would add a header of its own, so it skips the whole server. */
function headers(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new EntryProblem('"headers" must be an object of strings');
  const entries: Array<[string, string]> = [];
  for (const [name, raw] of Object.entries(value)) {
    const text = typeof raw === 'number' ? String(raw) : raw;
    if (!HEADER_NAME.test(name)) throw new EntryProblem(`"headers" has ${quoteName(name)}, which is not a header name`);
    if (typeof text !== 'string') throw new EntryProblem(`"headers".${quoteName(name)} is ${describe(raw)}, not a string`);
    if (/[\r\n\0]/.test(text)) throw new EntryProblem(`"headers".${quoteName(name)} holds a line break or a NUL character`);
    entries.push([name, text]);
  }
  return Object.fromEntries(entries);
}

function readInputs(inputs: unknown, config: McpConfig): void {
  if (inputs === undefined) return;
  if (!Array.isArray(inputs)) {
    config.problems.push('MCP configuration: "inputs" is not an array');
    return;
  }
  const seen = new Set<string>();
  inputs.forEach((raw: unknown, i) => {
    const input = readInput(raw);
    const label = isRecord(raw) && typeof raw.id === 'string' ? quoteName(raw.id) : `number ${i + 1}`;
    if (typeof input === 'string') config.problems.push(`MCP input ${label}: ${input}; it is skipped`);
    else if (seen.has(input.id)) config.problems.push(`MCP input ${label}: a second input with this id; only the first is used`);
    else {
      seen.add(input.id);
      config.inputs.push(input);
    }
  });
}

/** An input, or what is wrong with it. */
function readInput(raw: unknown): McpInput | string {
  if (!isRecord(raw)) return 'not an object';
  if (raw.type !== 'promptString') return `"type" is ${describe(raw.type)}; Candor asks only for "promptString" inputs`;
  if (typeof raw.id !== 'string' || raw.id.trim() === '') return '"id" must be a non-empty string';
  if (raw.description !== undefined && typeof raw.description !== 'string') return '"description" must be a string';
  if (raw.password !== undefined && typeof raw.password !== 'boolean') return '"password" must be true or false';
  if (raw.default !== undefined && typeof raw.default !== 'string') return '"default" must be a string';
  return {
    id: raw.id,
    description: raw.description ?? raw.id,
    password: raw.password ?? false,
    ...(raw.default === undefined ? {} : { default: raw.default }),
  };
}

/** A value's kind for a problem line, never the value itself (it may be a token). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length <= 20 && !hasInvisible(value) ? JSON.stringify(value) : 'a string';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
