import * as crypto from 'node:crypto';
import * as fs from 'node:fs';

/** One entry of the view repository's index: HEAD's path, mode and blob, and the view file's stat when it holds exactly that blob. */
export interface IndexEntry {
  readonly path: string;
  /** `100644`, `100755`, `120000` or `160000`. */
  readonly mode: string;
  readonly oid: string;
  /**
   * The view file's lstat when its bytes are HEAD's: git then trusts it as
   * clean without reading it. Without one the entry's stat is zero, and git
   * reads the file to decide (a changed or overlaid file).
   */
  readonly stat?: fs.BigIntStats;
}

const LOW32 = 0xffffffffn;

/**
 * Writes an index (version 2, no extensions) holding `entries`: the view's
 * repository starts with HEAD's tree staged, so everything the view differs
 * by shows as unstaged or untracked.
 */
export function writeIndex(file: string, entries: readonly IndexEntry[]): void {
  const sorted = entries
    .map((entry) => ({ entry, name: Buffer.from(entry.path) }))
    .sort((a, b) => Buffer.compare(a.name, b.name));
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write('DIRC', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(sorted.length, 8);
  parts.push(header);
  for (const { entry, name } of sorted) parts.push(encodeEntry(entry, name));
  const body = Buffer.concat(parts);
  fs.writeFileSync(file, Buffer.concat([body, crypto.createHash('sha1').update(body).digest()]));
}

function encodeEntry(entry: IndexEntry, name: Buffer): Buffer {
  // 62 bytes of fields, the name, then 1 to 8 NULs to a multiple of 8.
  const length = Math.ceil((62 + name.length + 1) / 8) * 8;
  const out = Buffer.alloc(length);
  const s = entry.stat;
  const fields = s === undefined ? new Array<bigint>(10).fill(0n) : [s.ctimeMs / 1000n, s.ctimeNs % 1_000_000_000n, s.mtimeMs / 1000n, s.mtimeNs % 1_000_000_000n, s.dev, s.ino, 0n, s.uid, s.gid, s.size];
  fields[6] = BigInt(Number.parseInt(entry.mode, 8));
  fields.forEach((value, i) => out.writeUInt32BE(Number(value & LOW32), i * 4));
  Buffer.from(entry.oid, 'hex').copy(out, 40);
  out.writeUInt16BE(Math.min(name.length, 0xfff), 60);
  name.copy(out, 62);
  return out;
}
