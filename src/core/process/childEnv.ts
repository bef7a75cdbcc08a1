/**
 * The environment of every process Candor starts for a run (gate commands,
 * git in the scratch clone): the host's, without the API key, without any
 * `CANDOR_*` variable, without any variable whose value is a secret the caller
 * named, and without `GIT_*` (a stray GIT_DIR or GIT_WORK_TREE would aim a
 * command at another repository — the workspace).
 */
export function childEnv(secrets: readonly string[] = [], base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const secretValues = new Set(secrets.filter((s) => s.length >= 4));
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined) continue;
    const upper = key.toUpperCase();
    if (STRIPPED_NAMES.has(upper) || upper.startsWith('CANDOR_') || upper.startsWith('GIT_')) continue;
    if (secretValues.has(value) || [...secretValues].some((secret) => value.includes(secret))) continue;
    env[key] = value;
  }
  return env;
}

const STRIPPED_NAMES = new Set(['OPENAI_API_KEY', 'OPENAI_KEY', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID']);
