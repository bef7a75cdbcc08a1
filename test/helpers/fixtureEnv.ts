import * as os from 'node:os';

/**
 * The environment of the real git that builds test fixtures: the machine's
 * own `GIT_*` variables dropped, its global and system config ignored, a
 * fixed identity, no editor or prompt, the C locale.
 */
export const FIXTURE_ENV: NodeJS.ProcessEnv = (() => {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  return {
    ...env,
    GIT_AUTHOR_NAME: 'Fixture Author',
    GIT_AUTHOR_EMAIL: 'author@example.invalid',
    GIT_COMMITTER_NAME: 'Fixture Committer',
    GIT_COMMITTER_EMAIL: 'committer@example.invalid',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_EDITOR: 'true',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
})();
