import * as os from 'node:os';

/** What the name lookup needs: `os.userInfo`, the environment and the uid (tests pass their own). */
export interface UserLookup {
  readonly userInfo: () => { readonly username: string };
  readonly env: NodeJS.ProcessEnv;
  readonly uid: number | undefined;
}

const HOST: UserLookup = { userInfo: () => os.userInfo(), env: process.env, uid: process.getuid?.() };

/**
 * The name of the user Candor runs as, for `USER` and `LOGNAME` of the
 * commands it runs. `os.userInfo()` throws for a uid with no passwd entry
 * (a container started with `--user 12345`): then `$USER`, `$LOGNAME`, and
 * last the uid itself, never an exception.
 */
export function currentUserName(lookup: UserLookup = HOST): string {
  try {
    const name = lookup.userInfo().username;
    if (name !== '') return name;
  } catch {
    // No passwd entry for this uid: fall through to the environment.
  }
  for (const name of [lookup.env.USER, lookup.env.LOGNAME]) if (name !== undefined && name !== '') return name;
  return lookup.uid !== undefined ? String(lookup.uid) : 'user';
}
