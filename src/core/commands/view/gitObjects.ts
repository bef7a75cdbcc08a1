import * as crypto from 'node:crypto';
import { CANDOR_EMAIL, CANDOR_NAME } from '../../identity';

/**
 * Git's object encoding, for the view's own repository: Candor writes its
 * objects itself rather than start git on a folder commands run in, so no
 * configuration, hook or attribute in the copied files can run anything.
 * The formats are git's (gitformat-pack(5), gitformat-index(5)); the tests
 * check the result with git itself (`fsck`, `rev-parse HEAD^{tree}`).
 */

export type ObjectType = 'commit' | 'tree' | 'blob';

export interface GitObject {
  readonly type: ObjectType;
  readonly oid: string;
  readonly body: Buffer;
}

/** One path of HEAD's tree. */
export interface HeadEntry {
  readonly path: string;
  /** `100644`, `100755`, `120000` or `160000`. */
  readonly mode: string;
  readonly oid: string;
}

export function objectId(type: ObjectType, body: Uint8Array): string {
  return crypto.createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

interface Folder {
  readonly files: Map<string, HeadEntry>;
  readonly folders: Map<string, Folder>;
}

/**
 * The tree objects of `entries`, the root's last. Entries are ordered as
 * git orders them: by name bytes, a folder's name as if it ended in `/`.
 * Undefined when a path is both a file and a folder (no HEAD has that).
 */
export function buildTrees(entries: readonly HeadEntry[]): GitObject[] | undefined {
  const root: Folder = { files: new Map(), folders: new Map() };
  for (const entry of entries) {
    const parts = entry.path.split('/');
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      if (folder.files.has(part)) return undefined;
      let next = folder.folders.get(part);
      if (next === undefined) {
        next = { files: new Map(), folders: new Map() };
        folder.folders.set(part, next);
      }
      folder = next;
    }
    const name = parts[parts.length - 1] ?? '';
    if (folder.folders.has(name)) return undefined;
    folder.files.set(name, entry);
  }
  const trees: GitObject[] = [];
  encodeFolder(root, trees);
  return trees;
}

function encodeFolder(folder: Folder, out: GitObject[]): string {
  const rows: Array<{ key: Buffer; line: Buffer }> = [];
  for (const [name, sub] of folder.folders) {
    const oid = encodeFolder(sub, out);
    rows.push({ key: Buffer.from(`${name}/`), line: treeLine('40000', name, oid) });
  }
  for (const [name, entry] of folder.files) rows.push({ key: Buffer.from(name), line: treeLine(entry.mode, name, entry.oid) });
  rows.sort((a, b) => Buffer.compare(a.key, b.key));
  const body = Buffer.concat(rows.map((row) => row.line));
  const oid = objectId('tree', body);
  out.push({ type: 'tree', oid, body });
  return oid;
}

function treeLine(mode: string, name: string, oid: string): Buffer {
  return Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')]);
}


/** The one commit of the view's repository: fixed author, committer and date, so the same tree always gives the same commit. */
export function viewCommit(tree: string): GitObject {
  const who = `${CANDOR_NAME} <${CANDOR_EMAIL}> 0 +0000`;
  const body = Buffer.from(`tree ${tree}\nauthor ${who}\ncommitter ${who}\n\nThe workspace's HEAD tree, for commands run in Candor's view of it\n`);
  return { type: 'commit', oid: objectId('commit', body), body };
}
