import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const GUARD = path.resolve(__dirname, '../../../../../src/core/git/guard.ts');

export type ChildOpen = { readonly root: string; readonly clean: boolean } | { readonly kind: string; readonly message: string };

/**
 * Opens `folder` with the guard in a fresh Node process whose PATH is
 * `pathValue` and whose working folder is `cwd`, then reads its status.
 * A fresh process, because git is resolved once per process.
 */
export function openInChild(folder: string, pathValue: string, cwd: string): ChildOpen {
  const script = `
    const { ReadOnlyGit } = require(${JSON.stringify(GUARD)});
    ReadOnlyGit.open(${JSON.stringify(folder)})
      .then(async (repo) => ({ root: repo.root, clean: !(await repo.dirtyState()).dirty }))
      .catch((err) => ({ kind: err.kind, message: err.message }))
      .then((result) => process.stdout.write(JSON.stringify(result)));
  `;
  const out = execFileSync(process.execPath, ['-r', require.resolve('tsx/cjs'), '-e', script], {
    cwd,
    env: { PATH: pathValue, HOME: process.env.HOME ?? '/' },
    encoding: 'utf8',
  });
  return JSON.parse(out) as ChildOpen;
}
