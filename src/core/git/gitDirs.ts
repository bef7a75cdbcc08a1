import * as fs from 'node:fs';
import * as path from 'node:path';
import { readBounded } from '../boundedRead';
import { GitGuardError } from './errors';

/**
 * Where a repository's git data really lives, found by reading files only —
 * no git, no program of the repository (docs/architecture.md, "Sandbox").
 * The folder of a checkout is not all of it:
 *
 * - a linked worktree's `.git` is a file `gitdir: <main>/.git/worktrees/<id>`;
 *   that folder's `commondir` names the common git dir (objects, refs,
 *   config) and its parent is the main working tree, with the user's
 *   untracked work; `<common>/worktrees/*` name the other linked worktrees;
 * - `objects/info/alternates` borrows objects from other repositories;
 * - a submodule's `.git` file points into the superproject's
 *   `.git/modules/<name>`.
 *
 * The gate must see none of these. **Submodules**: the agent repository may
 * be a submodule; then the superproject's git dir and its whole work tree
 * (which holds the submodule) are hidden as well, and so, recursively, is
 * everything of the superproject's own (its worktrees, alternates, and its
 * superproject). The scratch clone is made from the submodule alone, so the
 * gate needs nothing of the superproject.
 */

export interface RepositoryPaths {
  /** The checkout; undefined for a bare repository (a superproject can be one). */
  readonly workTree?: string;
  /** `<workTree>/.git`, or where a `.git` file points. */
  readonly gitDir: string;
  /** Objects, refs and config: the git dir, or where its `commondir` points. */
  readonly commonDir: string;
  /** For a linked worktree: the main working tree. */
  readonly mainWorkTree?: string;
  /** The linked worktrees of the same repository, other than `workTree`. */
  readonly otherWorkTrees: readonly string[];
  /** Object folders borrowed through `objects/info/alternates`, followed transitively. */
  readonly alternates: readonly string[];
  /** When the repository is a submodule: the superproject that holds it. */
  readonly superproject?: RepositoryPaths;
}

/** Git reads alternates five levels deep; the same bound serves superprojects. */
const MAX_DEPTH = 5;
/** `.git` files, `commondir`, `gitdir`, alternates, config: a few lines each. */
const SMALL_FILE = 64 * 1024;
const MAX_WORKTREES = 1000;

/** The git paths of the checkout at `root` (its top level). Throws `not-a-repo` when `root/.git` leads to no git dir. */
export async function repositoryPaths(root: string): Promise<RepositoryPaths> {
  const workTree = path.resolve(root);
  return describeGitDir(await gitDirOf(workTree), workTree, 0);
}

/**
 * Every folder the gate must not see, as real paths of folders that exist:
 * the checkout, its git dir and common dir, the main working tree and the
 * other linked worktrees, borrowed object folders (with the repository that
 * owns each), and a superproject's. Pass it to the sandbox as `hidden`.
 */
export async function hiddenForGate(root: string): Promise<string[]> {
  const found: string[] = [];
  await collect(await repositoryPaths(root), found);
  const real = new Set<string>();
  for (const dir of found) {
    const resolved = await realOrUndefined(dir);
    if (resolved !== undefined) real.add(resolved);
  }
  if (real.has(path.parse(path.resolve(root)).root)) {
    throw new GitGuardError('invalid', `a folder of the repository at ${root} (its main working tree, a worktree or a superproject) is the filesystem root, which a gate cannot be kept from; use a checkout elsewhere`);
  }
  return [...real].sort();
}

async function collect(paths: RepositoryPaths, into: string[]): Promise<void> {
  into.push(...[paths.workTree, paths.gitDir, paths.commonDir, paths.mainWorkTree].filter((p): p is string => p !== undefined));
  into.push(...paths.otherWorkTrees, ...paths.alternates);
  for (const objects of paths.alternates) {
    // A borrowed object folder is usually `<repo>/.git/objects`: the repository it came from is a checkout of the same project.
    const owner = path.dirname(objects);
    if (path.basename(objects) !== 'objects' || !(await isGitDir(owner))) continue;
    into.push(owner);
    const tree = await workTreeOf(owner);
    if (tree !== undefined) into.push(tree);
  }
  if (paths.superproject !== undefined) await collect(paths.superproject, into);
}

async function describeGitDir(gitDir: string, workTree: string | undefined, depth: number): Promise<RepositoryPaths> {
  const commonDir = await commonDirOf(gitDir);
  const linked = path.resolve(commonDir) !== path.resolve(gitDir);
  const mainWorkTree = linked ? await workTreeOf(commonDir) : undefined;
  const otherWorkTrees = (await linkedWorkTrees(commonDir)).filter((dir) => workTree === undefined || path.resolve(dir) !== workTree);
  const alternates = await alternatesOf(path.join(commonDir, 'objects'), 0);
  const superGitDir = (await enclosingSuperproject(commonDir)) ?? (await enclosingSuperproject(gitDir));
  let superproject: RepositoryPaths | undefined;
  if (superGitDir !== undefined && depth < MAX_DEPTH) {
    const superTree = await workTreeOf(superGitDir);
    superproject = await describeGitDir(superGitDir, superTree, depth + 1);
  }
  return { ...(workTree !== undefined ? { workTree } : {}), gitDir, commonDir, ...(mainWorkTree !== undefined ? { mainWorkTree } : {}), otherWorkTrees, alternates, ...(superproject !== undefined ? { superproject } : {}) };
}

/** `root/.git` when it is a folder (or a symlink to one); where a `.git` file's `gitdir:` line points (relative to root). */
async function gitDirOf(root: string): Promise<string> {
  const dotGit = path.join(root, '.git');
  const stat = await fs.promises.stat(dotGit).catch(() => undefined);
  let gitDir: string | undefined;
  if (stat?.isDirectory() === true) gitDir = dotGit;
  else if (stat?.isFile() === true) {
    const line = (await smallText(dotGit))?.split('\n').find((l) => l.startsWith('gitdir:'));
    if (line !== undefined) gitDir = path.resolve(root, line.slice('gitdir:'.length).trim());
  }
  if (gitDir === undefined || !(await isGitDir(gitDir))) throw new GitGuardError('not-a-repo', `${root} is not a git checkout: ${dotGit} leads to no git folder`);
  return gitDir;
}

async function commonDirOf(gitDir: string): Promise<string> {
  const text = (await smallText(path.join(gitDir, 'commondir')))?.trim();
  return text !== undefined && text !== '' ? path.resolve(gitDir, text) : gitDir;
}

/**
 * The working tree of a git dir: a linked worktree's admin folder names its
 * `.git` file in `gitdir`; else `core.worktree` (a submodule's); else the
 * parent of a folder named `.git`; else none (bare).
 */
export async function workTreeOf(gitDir: string): Promise<string | undefined> {
  const pointer = (await smallText(path.join(gitDir, 'gitdir')))?.trim();
  if (pointer !== undefined && pointer !== '') return path.dirname(path.resolve(gitDir, pointer));
  const config = (await smallText(path.join(gitDir, 'config'))) ?? '';
  const worktree = configValue(config, 'core', 'worktree');
  if (worktree !== undefined && worktree !== '') return path.resolve(gitDir, worktree);
  if (configValue(config, 'core', 'bare')?.toLowerCase() === 'true') return undefined;
  return path.basename(gitDir) === '.git' ? path.dirname(gitDir) : undefined;
}

async function linkedWorkTrees(commonDir: string): Promise<string[]> {
  const admin = path.join(commonDir, 'worktrees');
  const entries = await fs.promises.readdir(admin, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries.slice(0, MAX_WORKTREES)) {
    if (!entry.isDirectory()) continue;
    const pointer = (await smallText(path.join(admin, entry.name, 'gitdir')))?.trim();
    if (pointer !== undefined && pointer !== '') found.push(path.dirname(path.resolve(admin, entry.name, pointer)));
  }
  return found;
}

async function alternatesOf(objectsDir: string, depth: number): Promise<string[]> {
  if (depth >= MAX_DEPTH) return [];
  const text = await smallText(path.join(objectsDir, 'info', 'alternates'));
  if (text === undefined) return [];
  const found: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const dir = path.resolve(objectsDir, line.startsWith('"') ? unquote(line) : line);
    if (found.includes(dir)) continue;
    found.push(dir, ...(await alternatesOf(dir, depth + 1)).filter((d) => !found.includes(d)));
  }
  return found;
}

/** The nearest `<gitdir>/modules/…` above `dir`: the superproject's git dir of a submodule. */
async function enclosingSuperproject(dir: string): Promise<string | undefined> {
  let current = path.resolve(dir);
  while (path.dirname(current) !== current) {
    const parent = path.dirname(current);
    if (path.basename(current) === 'modules' && (await isGitDir(parent))) return parent;
    current = parent;
  }
  return undefined;
}

/** A git dir has a HEAD file and an objects folder (or, a linked worktree's, a commondir file). */
async function isGitDir(dir: string): Promise<boolean> {
  const head = await fs.promises.stat(path.join(dir, 'HEAD')).catch(() => undefined);
  if (head?.isFile() !== true) return false;
  const objects = await fs.promises.stat(path.join(dir, 'objects')).catch(() => undefined);
  if (objects?.isDirectory() === true) return true;
  return (await fs.promises.stat(path.join(dir, 'commondir')).catch(() => undefined))?.isFile() === true;
}

/** A small file of git's as text; undefined when absent or not a plain file of at most 64 KiB. */
async function smallText(file: string): Promise<string | undefined> {
  try {
    return (await readBounded(file, SMALL_FILE))?.toString('utf8');
  } catch {
    return undefined;
  }
}

async function realOrUndefined(dir: string): Promise<string | undefined> {
  try {
    return await fs.promises.realpath(dir);
  } catch {
    return undefined;
  }
}

/**
 * The last value of `key` in `[section]` of a git config file (no
 * subsection, no includes): enough for `core.worktree` and `core.bare`.
 */
export function configValue(text: string, section: string, key: string): string | undefined {
  let inSection = false;
  let value: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)\s*(?:"[^"]*")?\s*\]/.exec(line);
    if (header !== null) {
      inSection = header[1]?.toLowerCase() === section.toLowerCase() && !line.includes('"');
      continue;
    }
    if (!inSection) continue;
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (entry?.[1]?.toLowerCase() === key.toLowerCase()) value = entry[2] === undefined ? 'true' : configText(entry[2]);
  }
  return value;
}

/** A config value: quotes removed, escapes resolved, a trailing comment cut. */
function configText(raw: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] ?? '';
    if (c === '\\') {
      const next = raw[++i] ?? '';
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'b' ? '\b' : next;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return quoted ? out : out.trimEnd();
}

/** A C-quoted path as git writes one in `alternates` (octal escapes are bytes of UTF-8). */
function unquote(line: string): string {
  const body = line.replace(/^"|"$/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i] ?? '';
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal !== null) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
      continue;
    }
    const next = body[++i] ?? '';
    bytes.push(...Buffer.from(next === 'n' ? '\n' : next === 't' ? '\t' : next, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}
