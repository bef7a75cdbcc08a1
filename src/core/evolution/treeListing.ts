import { scratchGit, scratchGitBytes, type Scratch, type ScratchGitOptions } from './scratchGit';

/**
 * What a commit of the scratch clone holds, read from git's objects only
 * (`ls-tree`: no work tree, no config-named program, nothing the model left
 * is read): the reset's map of what may stay, the submodule folders it
 * leaves empty, and the `.gitattributes` files that decide whether a run
 * may start (docs/architecture.md, "Evolution").
 */
export interface TreeListing {
  /** Folders, `/`-separated, relative to the top. */
  readonly folders: ReadonlySet<string>;
  /** Files and links, with git's mode (`100644`, `100755`, `120000`). */
  readonly files: ReadonlyMap<string, string>;
  /** Submodule folders (gitlinks): never populated in the scratch clone. */
  readonly gitlinks: readonly string[];
  /** Every `.gitattributes` file, with its blob. */
  readonly attributes: ReadonlyArray<{ readonly path: string; readonly blob: string }>;
}

export async function listTree(scratch: Scratch, commit: string, options: ScratchGitOptions = {}): Promise<TreeListing> {
  const out = await scratchGit(scratch, ['ls-tree', '-r', '-t', '-z', '--full-tree', commit], options);
  const folders = new Set<string>();
  const files = new Map<string, string>();
  const gitlinks: string[] = [];
  const attributes: Array<{ path: string; blob: string }> = [];
  for (const record of out.split('\0')) {
    const match = /^(\d{6}) (blob|tree|commit) ([0-9a-f]+)\t([\s\S]+)$/.exec(record);
    if (match === null) continue;
    const [, mode = '', type, id = '', file = ''] = match;
    if (type === 'tree') folders.add(file);
    else if (type === 'commit') gitlinks.push(file);
    else {
      files.set(file, mode);
      if (file === '.gitattributes' || file.endsWith('/.gitattributes')) attributes.push({ path: file, blob: id });
    }
  }
  return { folders, files, gitlinks, attributes };
}

/**
 * Why a run may not start on this commit, or undefined: a `.gitattributes`
 * that names a filter. Candor's git in the clone runs no filter driver (none
 * of the user's config is read, and the clone's own names none), so such a
 * clone would hold the filter's input, not what the user's checkout holds,
 * and the gate would test something else. All of them are read by one
 * `cat-file --batch`.
 */
export async function filterRefusal(scratch: Scratch, listing: TreeListing, options: ScratchGitOptions = {}): Promise<string | undefined> {
  if (listing.attributes.length === 0) return undefined;
  const out = await scratchGitBytes(scratch, ['cat-file', '--batch'], { ...options, input: `${listing.attributes.map((file) => file.blob).join('\n')}\n` });
  let at = 0;
  for (const file of listing.attributes) {
    const headerEnd = out.indexOf(10, at);
    const size = Number(/^[0-9a-f]+ blob (\d+)$/.exec(out.subarray(at, headerEnd).toString('utf8'))?.[1] ?? Number.NaN);
    if (headerEnd < 0 || !Number.isInteger(size)) return `HEAD's ${file.path} could not be read from the clone's objects; evolution does not start without knowing whether it names a filter`;
    const text = out.subarray(headerEnd + 1, headerEnd + 1 + size).toString('utf8');
    at = headerEnd + 1 + size + 1;
    const line = text.split('\n').find((l) => /(^|\s)filter=\S/.test(l.replace(/#.*$/, '')));
    if (line !== undefined) {
      return `HEAD's ${file.path} names a filter driver ("${line.trim().slice(0, 120)}"): Candor's git in the scratch clone runs no filter (none of your git config is read there, so a model's code cannot name one), and the clone would not hold what your checkout holds. Evolution does not run on a repository whose .gitattributes names a filter (Git LFS among them)`;
    }
  }
  return undefined;
}
