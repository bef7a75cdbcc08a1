import * as path from 'node:path';
import { isUsableSecret, looksLikeCredentialName, urlPasswords } from '../redact';
import { holdsSecret, isNeverPassed } from './childEnv';

/**
 * The environment of every command Candor runs for the model is built here
 * from an allow-list (docs/architecture.md, "Sandbox"): the core names every
 * use shares, the names a use adds, the names the user listed for that use,
 * and the variables the use sets itself. Nothing else of the host's
 * environment gets through — not a token, not an agent socket, not a
 * database URL.
 *
 * Names match in any case (Windows treats them so; `HTTP_PROXY` also passes
 * `http_proxy`). An entry may end in `*` to match a prefix (`LC_*`,
 * `MYAPP_*`); a prefix never matches a name that looks like a credential, so
 * a token passes only when its exact name is listed. No entry passes
 * `OPENAI_API_KEY` and its companions, a `CANDOR_*` or a `GIT_*` variable, or
 * a value holding one of Candor's own secrets (isNeverPassed, holdsSecret).
 */

/** What every use inherits: PATH, the locale, the time zone, the terminal and colour preferences. */
export const CORE_NAMES: readonly string[] = ['PATH', 'LANG', 'LANGUAGE', 'LC_*', 'TZ', 'TERM', 'COLORTERM', 'NO_COLOR', 'FORCE_COLOR'];

/** Without these a Windows process cannot start a shell or find a program. */
const WINDOWS_NAMES: readonly string[] = ['SYSTEMROOT', 'WINDIR', 'COMSPEC', 'PATHEXT'];

/** Where toolchains keep themselves; passed to the gate only when they point into a folder bound read-only. */
export const TOOLCHAIN_NAMES: readonly string[] = ['RUSTUP_HOME', 'CARGO_HOME', 'PYENV_ROOT', 'NVM_DIR', 'VOLTA_HOME', 'JAVA_HOME', 'GOROOT'];

/** What setup needs to download through a corporate proxy; only a command with the network gets them. */
export const PROXY_NAMES: readonly string[] = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS'];

/** Set in the environment of every command of an evolution gate, so a project's tests know where they run. */
const EVOLUTION_GATE_MARKER = 'CANDOR_EVOLUTION_GATE';

/** One use of a child environment: who it is for, and what it adds to the core list. */
export interface EnvironmentUse {
  /** What the environment is for ("the evolution gate", "a command", "an MCP server"). */
  readonly use: string;
  /** Names this use inherits beyond CORE_NAMES. */
  readonly names: readonly string[];
  /** The names the user listed for this use (`candor.evolution.environment`, …). */
  readonly extraNames: readonly string[];
  /** Variables this use always gets with these values; they replace an inherited one of the same name in any case. */
  readonly set: Readonly<Record<string, string>>;
  /** Values no variable may hold (the key from SecretStorage). */
  readonly withhold?: readonly string[];
  /** Default: this process's environment. */
  readonly base?: NodeJS.ProcessEnv;
}

export interface ChildEnvironment {
  readonly env: NodeJS.ProcessEnv;
  /**
   * Secrets the child was given on purpose, for the redaction set: the
   * password of any URL passed on (a proxy's), and the value of a
   * credential-looking variable the user listed.
   */
  readonly secrets: string[];
}

/** The environment of one use: the allow-listed variables of `base`, then what the use sets. */
export function childEnvironment(use: EnvironmentUse): ChildEnvironment {
  const given = [...CORE_NAMES, ...(process.platform === 'win32' ? WINDOWS_NAMES : []), ...use.names].map(parseEntry);
  const listed = use.extraNames.map(parseEntry);
  const setNames = new Set(Object.keys(use.set).map((name) => name.toUpperCase()));
  const env: NodeJS.ProcessEnv = {};
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(use.base ?? process.env)) {
    if (value === undefined || setNames.has(name.toUpperCase()) || isNeverPassed(name) || holdsSecret(value, use.withhold ?? [])) continue;
    if (!given.some((entry) => matches(entry, name)) && !listed.some((entry) => matches(entry, name))) continue;
    env[name] = value;
    for (const password of urlPasswords(value)) if (isUsableSecret(password)) secrets.add(password);
    if (looksLikeCredentialName(name) && isUsableSecret(value)) secrets.add(value);
  }
  return { env: { ...env, ...use.set }, secrets: [...secrets] };
}

export interface GateEnvironmentOptions {
  /** The throwaway home of this gate command. */
  readonly home: string;
  /** Its throwaway temp folder. */
  readonly tmp: string;
  /** The name of the uid the command runs as (USER, LOGNAME). */
  readonly user: string;
  /** Setup with the network: the proxy variables pass too. */
  readonly network: boolean;
  /** `candor.evolution.environment`. */
  readonly extraNames: readonly string[];
  /** Whether a folder is bound read-only in the sandbox: a toolchain location elsewhere would mislead the tools. */
  readonly isVisible: (dir: string) => boolean;
  /** Values no variable may hold (the key from SecretStorage). */
  readonly withhold?: readonly string[];
  readonly base?: NodeJS.ProcessEnv;
}

/**
 * The environment of an evolution gate command: CORE_NAMES; USER and LOGNAME
 * naming the gate's uid; HOME, TMPDIR, TMP and TEMP throwaway; `CI=1` and
 * `CANDOR_EVOLUTION_GATE=1` (a project whose own tests start a sandbox
 * cannot nest one here, and may skip those tests); the toolchain locations
 * that point into a visible folder; the names the user listed; with the
 * network, the proxy variables. The proxies' passwords come back in
 * `secrets`, for the redaction set.
 */
export function gateEnvironment(o: GateEnvironmentOptions): ChildEnvironment {
  return sandboxedEnvironment(o, 'the evolution gate', { [EVOLUTION_GATE_MARKER]: '1' });
}

/**
 * The environment of a command the agent runs (`run_command`), in the
 * sandbox over a view of the workspace: CORE_NAMES; USER and LOGNAME naming
 * the uid it runs as; HOME, TMPDIR, TMP and TEMP throwaway; `CI=1`, since
 * nothing answers on its standard input (a test runner's watch mode or a
 * prompt would wait for the timeout); the toolchain locations that point
 * into a visible folder; the names the user listed
 * (`candor.commands.environment`); with the network, the proxy variables.
 * Never the evolution gate's marker: this is not the gate.
 */
export function commandEnvironment(o: GateEnvironmentOptions): ChildEnvironment {
  return sandboxedEnvironment(o, 'a command', {});
}

/** What the gate's and the agent's commands share: the throwaway home and temp folder, the user, CI=1, visible toolchains, proxies with the network. */
function sandboxedEnvironment(o: GateEnvironmentOptions, use: string, own: Readonly<Record<string, string>>): ChildEnvironment {
  const base = o.base ?? process.env;
  const set: Record<string, string> = {
    USER: o.user,
    LOGNAME: o.user,
    HOME: o.home,
    TMPDIR: o.tmp,
    TMP: o.tmp,
    TEMP: o.tmp,
    CI: '1',
    ...own,
    ...(process.platform === 'win32' ? { USERPROFILE: o.home } : {}),
  };
  for (const name of TOOLCHAIN_NAMES) {
    const value = base[name];
    if (value === undefined || value === '' || !path.isAbsolute(value)) continue;
    const dir = path.resolve(value);
    if (o.isVisible(dir)) set[name] = dir;
  }
  return childEnvironment({ use, names: o.network ? PROXY_NAMES : [], extraNames: o.extraNames, set, withhold: o.withhold, base });
}

/** Whether `entry` can name variables: a name of letters, digits and `_` not starting with a digit, optionally ending in `*`. */
export function isEnvironmentEntry(entry: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(entry);
}

interface Entry {
  readonly upper: string;
  readonly prefix: boolean;
}

/** A malformed entry (a blank, `=`, a lone `*`) matches nothing. */
function parseEntry(entry: string): Entry | undefined {
  const trimmed = entry.trim();
  if (!isEnvironmentEntry(trimmed)) return undefined;
  const prefix = trimmed.endsWith('*');
  return { upper: (prefix ? trimmed.slice(0, -1) : trimmed).toUpperCase(), prefix };
}

function matches(entry: Entry | undefined, name: string): boolean {
  if (entry === undefined) return false;
  const upper = name.toUpperCase();
  if (!entry.prefix) return upper === entry.upper;
  return upper.startsWith(entry.upper) && !looksLikeCredentialName(name);
}
