import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURE_ENV, git, tempDir, write } from './repo';

/**
 * A hostile repository, as a user might receive one: unpacked from an
 * archive (`tar c | tar x`), so every file's stat data disagrees with the
 * index and `git status` has to re-read (and filter) each file. Its config
 * and hooks name programs; each is a "trap" that records, in its own marker
 * file, that it ran and the environment it saw.
 *
 * Generic on purpose: any test (guard, evolution, e2e) can build one and
 * check `ran(trap)` and `seen(trap)`.
 */

export type Trap =
  /** `filter.evil.clean`, with `* filter=evil` in `.gitattributes`. */
  | 'filter'
  /** `diff.external`: runs for every porcelain `git diff`. */
  | 'external-diff'
  /** `diff.evil.textconv`, with `* diff=evil`: runs for `git diff --no-ext-diff`, `git show`, `git log -p`. */
  | 'textconv'
  /** `gpg.program`, called by `log.showSignature=true` for the signed commit on top. */
  | 'signature'
  /** `.git/hooks/post-index-change`: runs when a refreshing status writes the index. */
  | 'post-index-change'
  /** `.git/hooks/reference-transaction`: runs on every ref update, a fetch's too. */
  | 'reference-transaction'
  /** `.git/hooks/post-checkout`. */
  | 'post-checkout'
  /** `core.alternateRefsCommand`, with an alternate object store: runs on fetch. */
  | 'alternate-refs'
  /** `url."ext::<trap> insteadof".insteadOf = <options.insteadOf>`, with `protocol.allow=always`. */
  | 'insteadof'
  /** `remote.origin.uploadpack` of a blobless partial clone: runs when a read needs a missing blob (`show LAZY_REV`). */
  | 'lazy-fetch';

/** With `lazyFetch`: a revision whose patch needs a blob the partial clone does not have. */
export const LAZY_REV = 'needs-missing-blob';

export const HOOK_TRAPS: readonly Trap[] = ['post-index-change', 'reference-transaction', 'post-checkout'];

export interface HostileRepoOptions {
  readonly filter?: boolean;
  /** `diff.external` and a textconv driver. */
  readonly diffPrograms?: boolean;
  readonly signature?: boolean;
  readonly hooks?: boolean;
  readonly alternateRefs?: boolean;
  /** A URL or path that the repository rewrites to an `ext::` command (the scratch clone's path, say). */
  readonly insteadOf?: string;
  readonly lazyFetch?: boolean;
  /** Extra committed files. */
  readonly files?: Readonly<Record<string, string>>;
}

export interface HostileRepo {
  /** The delivered repository (a `tar c | tar x` copy of the one built). */
  readonly root: string;
  /** Another delivered copy of the same repository, with fresh stat data (the traps share their markers). */
  deliver(): string;
  /** The marker file a trap writes when it runs. */
  marker(trap: Trap): string;
  ran(trap: Trap): boolean;
  /** The environment the trap saw (`env` output), or '' when it never ran. */
  seen(trap: Trap): string;
  /** Removes every marker. */
  clear(): void;
}

export function hostileRepository(options: HostileRepoOptions = {}): HostileRepo {
  const tools = tempDir('candor-traps-');
  const markers = path.join(tools, 'markers');
  fs.mkdirSync(markers);
  const trap = (name: Trap): string => {
    const program = path.join(tools, name);
    // Named after itself, so every trap can be the same script; the filter passes its input through.
    fs.writeFileSync(program, `#!/bin/sh\nenv > '${markers}'/"$(basename "$0")"\nif [ "$(basename "$0")" = filter ]; then cat; fi\nexit 0\n`, { mode: 0o755 });
    return program;
  };

  const source = options.lazyFetch === true ? partialClone(tools) : tempDir('candor-hostile-src-');
  if (options.lazyFetch !== true) git(source, 'init', '-q', '-b', 'main');
  write(source, 'README.md', '# A repository from somewhere\n');
  write(source, 'src/main.txt', 'main\n');
  const attributes = [options.filter === true ? 'filter=evil' : '', options.diffPrograms === true ? 'diff=evil' : ''].filter(Boolean);
  if (attributes.length > 0) write(source, '.gitattributes', `* ${attributes.join(' ')}\n`);
  for (const [name, content] of Object.entries(options.files ?? {})) write(source, name, content);
  git(source, 'add', '-A');
  git(source, 'commit', '-q', '-m', 'hostile');
  if (options.signature === true) commitWithSignatureHeader(source);

  const config = (key: string, value: string): string => git(source, 'config', key, value);
  if (options.filter === true) config('filter.evil.clean', trap('filter'));
  if (options.diffPrograms === true) {
    config('diff.external', trap('external-diff'));
    config('diff.evil.textconv', trap('textconv'));
  }
  if (options.signature === true) {
    config('log.showSignature', 'true');
    config('gpg.program', trap('signature'));
  }
  if (options.alternateRefs === true) {
    const alternate = path.join(tools, 'alternate.git');
    git(tools, 'init', '-q', '--bare', alternate);
    fs.writeFileSync(path.join(source, '.git', 'objects', 'info', 'alternates'), `${path.join(alternate, 'objects')}\n`);
    config('core.alternateRefsCommand', trap('alternate-refs'));
  }
  if (options.insteadOf !== undefined) {
    config(`url.ext::${trap('insteadof')} insteadof.insteadOf`, options.insteadOf);
    config('protocol.allow', 'always');
  }
  if (options.lazyFetch === true) config('remote.origin.uploadpack', trap('lazy-fetch'));
  if (options.hooks === true) {
    for (const hook of HOOK_TRAPS) fs.copyFileSync(trap(hook), path.join(source, '.git', 'hooks', hook));
  }

  const deliver = (): string => {
    const copy = tempDir('candor-hostile-');
    execFileSync('sh', ['-c', `tar -C '${source}' -cf - . | tar -C '${copy}' -xf -`]);
    return copy;
  };
  const marker = (name: Trap): string => path.join(markers, name);
  return {
    root: deliver(),
    deliver,
    marker,
    ran: (name) => fs.existsSync(marker(name)),
    seen: (name) => (fs.existsSync(marker(name)) ? fs.readFileSync(marker(name), 'utf8') : ''),
    clear: () => {
      for (const entry of fs.readdirSync(markers)) fs.rmSync(path.join(markers, entry), { force: true });
    },
  };
}

/**
 * A blobless partial clone of a two-commit server: HEAD's blobs are present,
 * the first commit's `history.txt` is not, so showing HEAD's patch needs a
 * lazy fetch from the promisor remote.
 */
function partialClone(tools: string): string {
  const server = path.join(tools, 'server');
  fs.mkdirSync(server);
  git(server, 'init', '-q', '-b', 'main');
  git(server, 'config', 'uploadpack.allowFilter', 'true');
  git(server, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
  write(server, 'history.txt', 'first version\n');
  git(server, 'add', '-A');
  git(server, 'commit', '-q', '-m', 'first');
  write(server, 'history.txt', 'second version\n');
  git(server, 'commit', '-q', '-am', 'second');
  const clone = tempDir('candor-hostile-src-');
  git(clone, 'clone', '-q', '--filter=blob:none', `file://${server}`, '.');
  git(clone, 'tag', LAZY_REV, 'HEAD');
  return clone;
}

/** A commit on top of HEAD whose header carries a (meaningless) `gpgsig`, made by hand. */
function commitWithSignatureHeader(repo: string): void {
  const tree = git(repo, 'rev-parse', 'HEAD^{tree}').trim();
  const parent = git(repo, 'rev-parse', 'HEAD').trim();
  const body = [
    `tree ${tree}`,
    `parent ${parent}`,
    'author Fixture Author <author@example.invalid> 1700000000 +0000',
    'committer Fixture Committer <committer@example.invalid> 1700000000 +0000',
    'gpgsig -----BEGIN PGP SIGNATURE-----',
    ' ',
    ' iQEzBAABCAAdFiEEfixturefixturefixturefixture=',
    ' -----END PGP SIGNATURE-----',
    '',
    'signed',
    '',
  ].join('\n');
  const commit = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: repo, env: FIXTURE_ENV, input: body, encoding: 'utf8' }).trim();
  git(repo, 'update-ref', 'refs/heads/main', commit);
}

/**
 * Git as a careless caller would run it (the control of every trap): the
 * machine's git, the given environment on top of the fixtures' own, no
 * guard. Returns the exit code and everything printed; never throws.
 */
export function plainGit(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): { status: number; output: string } {
  const result = spawnSync('git', args, { cwd, env: { ...FIXTURE_ENV, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: result.status ?? -1, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}
