import { looksLikeCredentialName } from '../redact';

/**
 * The environment of git, the one program Candor runs outside the sandbox
 * (docs/architecture.md, "What runs"): the host's, so that a trusted
 * repository's filter drivers find their tools and git its own config,
 * without Candor's secrets, without any `CANDOR_*` variable, without any
 * variable whose name looks like a credential (git's reads and the file-only
 * hand-off need none), without any variable whose value holds a secret the
 * caller named, and without `GIT_*` (a stray GIT_DIR or GIT_WORK_TREE would
 * aim a command at another repository — the workspace). Commands Candor runs
 * for the model get an allow-list instead (environment.ts).
 */
export function childEnv(secrets: readonly string[] = [], base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || isNeverPassed(key) || looksLikeCredentialName(key) || holdsSecret(value, secrets)) continue;
    env[key] = value;
  }
  return env;
}

/**
 * Names no child of Candor ever inherits, whatever a setting lists: the
 * provider's key and its companions, Candor's own variables, and git's
 * (which would point a git inside the child at another repository).
 */
export function isNeverPassed(name: string): boolean {
  const upper = name.toUpperCase();
  return STRIPPED_NAMES.has(upper) || upper.startsWith('CANDOR_') || upper.startsWith('GIT_');
}

/** Whether `value` is, or contains, one of `secrets` (at least 4 characters: a shorter one would match anything). */
export function holdsSecret(value: string, secrets: readonly string[]): boolean {
  return secrets.some((secret) => secret.length >= 4 && value.includes(secret));
}

const STRIPPED_NAMES = new Set(['OPENAI_API_KEY', 'OPENAI_KEY', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID']);
