/**
 * A definition's variables expanded (docs/architecture.md, "MCP"): the
 * `${…}` forms VS Code's MCP support knows that Candor can answer without
 * VS Code — `${workspaceFolder}`, `${workspaceFolderBasename}`,
 * `${userHome}`, `${pathSeparator}` (`${/}`), `${env:NAME}` and
 * `${input:ID}`. Any other (`${command:…}`, `${config:…}`, a typo) refuses
 * the server rather than start it with a hole in its command line.
 *
 * A workspace definition is written by whoever wrote the repository, so its
 * `${env:NAME}` reads only names the user listed in `candor.mcp.environment`,
 * and never one that looks like a credential or that no child of Candor may
 * inherit; its envFile must lie inside its folder. Every variable is checked
 * before any input is asked for, so a refused server asks nothing. Expansion
 * is one pass: a value that itself contains `${…}` stays as it is.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { isNeverPassed, holdsSecret } from '../process/childEnv';
import { isEnvironmentEntry } from '../process/environment';
import { looksLikeCredentialName } from '../redact';
import { hasInvisible, quoteName } from './display';
import { locateEnvFile, readServerEnvFile } from './envFile';
import { ExpandRefusal } from './refusal';
import { collectSecrets } from './secrets';
import { mcpServerEnvironment } from './serverEnv';
import type { ExpandedServer, McpInput, McpServerDefinition } from './types';
import { isKindError } from '../kindError';

export interface ExpandContext {
  /** The folder `${workspaceFolder}` means in a user definition (a workspace definition uses its own). */
  readonly workspaceFolder?: string;
  /** The host's environment, for `${env:NAME}` and for what the server inherits. */
  readonly env: NodeJS.ProcessEnv;
  /** `candor.mcp.environment`: what `${env:NAME}` may read in a workspace definition (`NAME`, or a prefix `NAME*`). */
  readonly allowedEnvNames: readonly string[];
  /** Asks for one input once (the host keeps the answer in SecretStorage); undefined: the user cancelled. */
  input(input: McpInput | undefined, id: string): Promise<string | undefined>;
  /** The inputs of the same configuration. */
  readonly inputs: readonly McpInput[];
  /** Reads an envFile; by default a bounded read that refuses a symlink, a FIFO or a file over 1 MiB. */
  readEnvFile?(file: string): Promise<string>;
  /** Values no inherited variable may hold (the key from SecretStorage). */
  readonly withhold?: readonly string[];
  /** `${userHome}`; by default the home of this process's user. */
  readonly userHome?: string;
}

export type ExpandResult =
  | {
      readonly ok: true;
      readonly server: ExpandedServer;
      /** Values to add to the redaction set: password inputs, credential-looking env and header values, URL passwords. */
      readonly secrets: string[];
    }
  | { readonly ok: false; readonly kind: 'cancelled' | 'refused'; readonly reason: string };

export async function expandServer(def: McpServerDefinition, ctx: ExpandContext): Promise<ExpandResult> {
  try {
    return await expand(def, ctx);
  } catch (err) {
    if (isKindError(err, ExpandRefusal)) return { ok: false, kind: err.kind, reason: err.message };
    throw err;
  }
}

async function expand(def: McpServerDefinition, ctx: ExpandContext): Promise<ExpandResult> {
  const strings = stringsOf(def);
  const references = strings.flatMap(([where, text]) => [...text.matchAll(VARIABLE)].map((m) => ({ where, name: m[1] ?? '' })));
  const folder = def.source.kind === 'workspace' ? def.source.folder : ctx.workspaceFolder;
  const known = new Map<string, string>();
  for (const { where, name } of references) if (!name.startsWith('input:')) known.set(name, plainValue(name, where, def, folder, ctx));
  // An envFile out of bounds refuses the server before anyone is asked for an input (unless its path needs one).
  if (def.type === 'stdio' && def.envFile !== undefined && !def.envFile.includes('${input:')) locateEnvFile(fillPlain(def.envFile, known), def.source, folder);
  const asked = await askInputs(references, ctx);
  const passwords = [...asked].filter(([id]) => ctx.inputs.find((input) => input.id === id)?.password === true).map(([, value]) => value);
  const credentialEnv = [...known].filter(([name]) => name.startsWith('env:') && looksLikeCredentialName(name.slice(4))).map(([, value]) => value);
  const fill = (text: string): string => text.replace(VARIABLE, (_m, name: string) => (name.startsWith('input:') ? asked.get(name.slice(6)) : known.get(name)) ?? '');
  const server = def.type === 'stdio' ? await expandStdio(def, fill, folder, ctx) : expandRemote(def, fill);
  const withEnv = server.type === 'stdio' ? serverWithEnvironment(server, ctx) : { server, inherited: [] };
  const secrets = collectSecrets(withEnv.server, [...passwords, ...credentialEnv, ...withEnv.inherited]);
  return { ok: true, server: withEnv.server, secrets };
}

/** `${name}`: anything but braces between them (VS Code's own form). */
const VARIABLE = /\$\{([^{}]*)\}/g;

function fillPlain(text: string, known: ReadonlyMap<string, string>): string {
  return text.replace(VARIABLE, (_m, name: string) => known.get(name) ?? '');
}

/** Every string of a definition that may hold a variable, with where it is for a reason. */
function stringsOf(def: McpServerDefinition): Array<[string, string]> {
  if (def.type === 'stdio') {
    return [
      ['"command"', def.command],
      ...def.args.map((arg, i): [string, string] => [`"args"[${i}]`, arg]),
      ...Object.entries(def.env).map(([name, value]): [string, string] => [`"env".${quoteName(name)}`, value]),
      ...(def.envFile === undefined ? [] : [['"envFile"', def.envFile] as [string, string]]),
      ...(def.cwd === undefined ? [] : [['"cwd"', def.cwd] as [string, string]]),
    ];
  }
  return [['"url"', def.url], ...Object.entries(def.headers).map(([name, value]): [string, string] => [`"headers".${quoteName(name)}`, value])];
}

/** The value of every variable but an input, or the refusal of the whole server. */
function plainValue(name: string, where: string, def: McpServerDefinition, folder: string | undefined, ctx: ExpandContext): string {
  const shown = quoteName(`\${${name}}`);
  switch (name) {
    case 'workspaceFolder':
    case 'workspaceFolderBasename':
      if (folder === undefined) throw new ExpandRefusal('refused', `${where} uses ${shown}, but no workspace folder is open`);
      return name === 'workspaceFolder' ? folder : path.basename(folder);
    case 'userHome':
      return ctx.userHome ?? os.homedir();
    case 'pathSeparator':
    case '/':
      return path.sep;
  }
  if (name.startsWith('env:')) return envValue(name.slice(4), where, def, ctx);
  throw new ExpandRefusal('refused', `${where} uses ${shown}, which Candor does not expand (it knows \${workspaceFolder}, \${userHome}, \${env:NAME} and \${input:ID})`);
}

function envValue(name: string, where: string, def: McpServerDefinition, ctx: ExpandContext): string {
  const value = lookUp(ctx.env, name) ?? '';
  if (def.source.kind === 'user') return value;
  const shown = quoteName(`\${env:${name}}`);
  if (isNeverPassed(name) || looksLikeCredentialName(name)) {
    throw new ExpandRefusal(
      'refused',
      `${where} reads ${shown}, a credential or a variable no program Candor starts may have; a workspace definition never reads it, not even when candor.mcp.environment lists it (use an \${input:…}, or define the server in your user settings)`,
    );
  }
  if (!isListed(name, ctx.allowedEnvNames)) {
    throw new ExpandRefusal('refused', `${where} reads ${shown}, which is not listed in candor.mcp.environment; add ${quoteName(name)} there to let workspace definitions read it`);
  }
  if (holdsSecret(value, ctx.withhold ?? [])) throw new ExpandRefusal('refused', `${where} reads ${shown}, whose value holds Candor's API key`);
  return value;
}

/** The exact name first; on Windows, where names have no case, any case. */
function lookUp(env: NodeJS.ProcessEnv, name: string): string | undefined {
  if (env[name] !== undefined || process.platform !== 'win32') return env[name];
  const upper = name.toUpperCase();
  return Object.entries(env).find(([key]) => key.toUpperCase() === upper)?.[1];
}

/** Listed exactly (any case), or under a listed prefix `NAME*`. */
function isListed(name: string, listed: readonly string[]): boolean {
  const upper = name.toUpperCase();
  return listed.some((raw) => {
    const entry = raw.trim();
    if (!isEnvironmentEntry(entry)) return false;
    return entry.endsWith('*') ? upper.startsWith(entry.slice(0, -1).toUpperCase()) : upper === entry.toUpperCase();
  });
}

/** Each input once, in the order the definition first uses it; one cancelled refuses the server. */
async function askInputs(references: ReadonlyArray<{ readonly name: string }>, ctx: ExpandContext): Promise<Map<string, string>> {
  const asked = new Map<string, string>();
  for (const { name } of references) {
    if (!name.startsWith('input:')) continue;
    const id = name.slice(6);
    if (asked.has(id)) continue;
    const value = await ctx.input(
      ctx.inputs.find((input) => input.id === id),
      id,
    );
    if (value === undefined) throw new ExpandRefusal('cancelled', `the input ${quoteName(id)} was not given`);
    asked.set(id, value);
  }
  return asked;
}

type StdioServer = Extract<ExpandedServer, { type: 'stdio' }>;
type StdioDefinition = Extract<McpServerDefinition, { type: 'stdio' }>;
type RemoteDefinition = Extract<McpServerDefinition, { type: 'http' | 'sse' | 'auto' }>;

/** The stdio server with only its own variables in `env` (the envFile's beneath the definition's); the inherited ones come after. */
async function expandStdio(def: StdioDefinition, fill: (text: string) => string, folder: string | undefined, ctx: ExpandContext): Promise<StdioServer> {
  const command = fill(def.command);
  if (command.trim() === '' || hasInvisible(command)) throw new ExpandRefusal('refused', '"command" is empty or holds a control or invisible character once expanded');
  const args = def.args.map(fill);
  const ownEnv = Object.fromEntries(Object.entries(def.env).map(([name, value]) => [name, fill(value)]));
  const fileEnv = def.envFile === undefined ? {} : await readServerEnvFile(fill(def.envFile), def.source, folder, ctx.readEnvFile);
  const env = { ...fileEnv, ...ownEnv };
  if ([...args, ...Object.values(env)].some((text) => text.includes('\0'))) throw new ExpandRefusal('refused', 'an argument or a variable holds a NUL character once expanded');
  const cwd = def.cwd === undefined ? undefined : resolveCwd(fill(def.cwd), folder);
  return { name: def.name, type: 'stdio', command, args, env, definedEnv: Object.keys(env), ...(cwd === undefined ? {} : { cwd }) };
}

function resolveCwd(cwd: string, folder: string | undefined): string {
  if (path.isAbsolute(cwd)) return cwd;
  if (folder === undefined) throw new ExpandRefusal('refused', `"cwd" ${quoteName(cwd)} is relative, and no workspace folder is open`);
  return path.join(folder, cwd);
}

function expandRemote(def: RemoteDefinition, fill: (text: string) => string): ExpandedServer {
  const url = fill(def.url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ExpandRefusal('refused', '"url" is not a URL once expanded');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ExpandRefusal('refused', `"url" is a ${quoteName(parsed.protocol)} URL; only http: and https: are connected`);
  const headers = Object.fromEntries(Object.entries(def.headers).map(([name, value]) => [name, fill(value)]));
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n\0]/.test(value)) throw new ExpandRefusal('refused', `"headers".${quoteName(name)} holds a line break or a NUL character once expanded`);
  }
  return { name: def.name, type: def.type, url, headers };
}

/** The whole environment: the allow-list of the host's, then the definition's own. */
function serverWithEnvironment(server: StdioServer, ctx: ExpandContext): { server: StdioServer; inherited: string[] } {
  const built = mcpServerEnvironment({ definitionEnv: server.env, withhold: ctx.withhold ?? [], base: ctx.env });
  const env = Object.fromEntries(Object.entries(built.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return { server: { ...server, env }, inherited: built.secrets };
}
