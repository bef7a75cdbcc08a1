import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import type { ObjectType } from './gitObjects';

const TYPE_CODES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };
/**
 * Objects up to this size are stored in zlib's format uncompressed (a
 * stored block is a header and the bytes): setting up a compressor costs
 * more than a small object's few kilobytes are worth in a pack that lives
 * beside a copy of the same files. Larger ones are compressed, off this
 * thread.
 */
const STORE_BYTES = 64 * 1024;
const deflate = promisify(zlib.deflate);
/** Written to the pack file in chunks of about this size. */
const FLUSH_BYTES = 1024 * 1024;

interface Placed {
  readonly oid: Buffer;
  readonly offset: number;
  readonly crc: number;
}

/**
 * Writes one pack (version 2, no deltas; small objects stored, larger ones
 * at zlib level 1: written once, read by a few commands) and its index
 * (version 2), as git names them
 * (`pack-<checksum>.pack`/`.idx`). The object count goes in the header
 * first, so it must be known; objects may be added from several tasks at
 * once, each appended whole.
 */
export class PackWriter {
  readonly #dir: string;
  readonly #temp: string;
  readonly #fd: number;
  readonly #hash = crypto.createHash('sha1');
  readonly #placed: Placed[] = [];
  readonly #expected: number;
  #offset = 0;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(packDir: string, count: number) {
    this.#dir = packDir;
    this.#expected = count;
    this.#temp = path.join(packDir, `tmp_pack_${process.pid}`);
    this.#fd = fs.openSync(this.#temp, 'w', 0o444);
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(count, 8);
    this.#write(header);
  }

  async add(type: ObjectType, oid: string, body: Buffer): Promise<void> {
    const data = body.length <= STORE_BYTES ? stored(body) : await deflate(body, { level: 1 });
    const header = objectHeader(TYPE_CODES[type], body.length);
    this.#placed.push({ oid: Buffer.from(oid, 'hex'), offset: this.#offset, crc: zlib.crc32(data, zlib.crc32(header)) });
    this.#write(header);
    this.#write(data);
  }

  /** Closes the pack, writes its index; the pack's checksum. */
  finish(): string {
    if (this.#placed.length !== this.#expected) throw new Error(`pack: ${this.#placed.length} objects written, ${this.#expected} announced`);
    this.#flush();
    const checksum = this.#hash.digest();
    fs.writeSync(this.#fd, checksum);
    fs.closeSync(this.#fd);
    const name = `pack-${checksum.toString('hex')}`;
    fs.writeFileSync(path.join(this.#dir, `${name}.idx`), packIndex(this.#placed, checksum), { mode: 0o444 });
    fs.renameSync(this.#temp, path.join(this.#dir, `${name}.pack`));
    return checksum.toString('hex');
  }

  /** Leaves no half-written pack behind after a failure. */
  abandon(): void {
    try {
      fs.closeSync(this.#fd);
    } catch {
      // Already closed.
    }
    fs.rmSync(this.#temp, { force: true });
  }

  #write(bytes: Buffer): void {
    this.#hash.update(bytes);
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    this.#offset += bytes.length;
    if (this.#pendingBytes >= FLUSH_BYTES) this.#flush();
  }

  #flush(): void {
    const bytes = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(this.#fd, bytes, done, bytes.length - done);
  }
}

/** `bytes` as a zlib stream of stored blocks (RFC 1950, 1951): the header, blocks of at most 65,535 bytes, the Adler-32. */
export function stored(bytes: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([0x78, 0x01])];
  let at = 0;
  do {
    const length = Math.min(0xffff, bytes.length - at);
    const header = Buffer.alloc(5);
    header[0] = at + length >= bytes.length ? 1 : 0;
    header.writeUInt16LE(length, 1);
    header.writeUInt16LE(length ^ 0xffff, 3);
    parts.push(header, bytes.subarray(at, at + length));
    at += length;
  } while (at < bytes.length);
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(adler32(bytes));
  parts.push(sum);
  return Buffer.concat(parts);
}

function adler32(bytes: Buffer): number {
  let a = 1;
  let b = 0;
  // 3,800 bytes at most between two reductions keeps b below 2^53 and exact.
  for (let i = 0; i < bytes.length; ) {
    const end = Math.min(bytes.length, i + 3800);
    for (; i < end; i++) {
      a += bytes[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Type and size: 3 bits of type and 4 of size, then 7 bits of size a byte, low first, the high bit saying more follow. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size % 16);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest % 128;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

function packIndex(placed: readonly Placed[], packChecksum: Buffer): Buffer {
  const sorted = [...placed].sort((a, b) => Buffer.compare(a.oid, b.oid));
  const fanout = Buffer.alloc(256 * 4);
  const counts = new Array<number>(256).fill(0);
  for (const p of sorted) counts[p.oid[0] as number]++;
  let total = 0;
  for (let i = 0; i < 256; i++) fanout.writeUInt32BE((total += counts[i] as number), i * 4);
  const crcs = Buffer.alloc(sorted.length * 4);
  const offsets = Buffer.alloc(sorted.length * 4);
  const large: Buffer[] = [];
  sorted.forEach((p, i) => {
    crcs.writeUInt32BE(p.crc >>> 0, i * 4);
    if (p.offset < 0x80000000) {
      offsets.writeUInt32BE(p.offset, i * 4);
    } else {
      offsets.writeUInt32BE((0x80000000 | large.length) >>> 0, i * 4);
      const wide = Buffer.alloc(8);
      wide.writeBigUInt64BE(BigInt(p.offset));
      large.push(wide);
    }
  });
  const head = Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]);
  const body = Buffer.concat([head, fanout, ...sorted.map((p) => p.oid), crcs, offsets, ...large, packChecksum]);
  return Buffer.concat([body, crypto.createHash('sha1').update(body).digest()]);
}
