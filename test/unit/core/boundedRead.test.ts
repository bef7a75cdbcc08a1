import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { hashBounded, isUnsafeFile, readBounded } from '../../../src/core/boundedRead';
import { removeTempDirs, tempDir } from './evolution/helpers';

const CAP = 1024 * 1024;

/** The error a bounded read gives, with what it says the file is. */
const unsafe = (what: RegExp) => (err: unknown): boolean => isUnsafeFile(err) && err.kind === 'unsafe-file' && what.test(err.message);

describe('bounded reads: what the model left in the clone is opened without following, checked on the descriptor, read to a cap', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('candor-bounded-');
  });
  afterEach(() => removeTempDirs());

  it('a FIFO: a plain readFileSync waits for a writer forever; the bounded read refuses it at once', async () => {
    const fifo = path.join(dir, 'package-lock.json');
    execFileSync('mkfifo', [fifo]);
    // The trap, in a child with a timeout so that the hang cannot take the test with it.
    const plain = spawnSync(process.execPath, ['-e', `require('fs').readFileSync(${JSON.stringify(fifo)})`], { timeout: 1500 });
    assert.equal(plain.signal, 'SIGTERM', 'the plain read was still waiting when the timeout killed it');
    await assert.rejects(readBounded(fifo, CAP, 'package-lock.json'), unsafe(/^package-lock\.json is a FIFO/));
    await assert.rejects(hashBounded(fifo, CAP, createHash('sha256')), unsafe(/FIFO/));
  });

  it('a symlink to /dev/zero: following it reads past any cap; the bounded read does not follow it', async () => {
    const link = path.join(dir, 'yarn.lock');
    fs.symlinkSync('/dev/zero', link);
    // The trap: existsSync says yes, and a read through the link never runs dry (here stopped just past the cap).
    assert.equal(fs.existsSync(link), true);
    const fd = fs.openSync(link, 'r');
    let read = 0;
    try {
      const buffer = Buffer.alloc(64 * 1024);
      while (read <= CAP) read += fs.readSync(fd, buffer, 0, buffer.length, null);
    } finally {
      fs.closeSync(fd);
    }
    assert.ok(read > CAP, `${read} bytes read through the link, more than the cap`);
    await assert.rejects(readBounded(link, CAP), unsafe(/is a symbolic link/));
    // A link to a harmless file is refused as well: only the descriptor of a regular file is read.
    fs.writeFileSync(path.join(dir, 'real.json'), '{}');
    fs.symlinkSync(path.join(dir, 'real.json'), path.join(dir, 'to-real.json'));
    await assert.rejects(readBounded(path.join(dir, 'to-real.json'), CAP), unsafe(/symbolic link/));
  });

  it('a folder by the name of a file: a plain read fails with EISDIR; the bounded read names it a folder', async () => {
    const folder = path.join(dir, 'package-lock.json');
    fs.mkdirSync(path.join(folder, 'inside'), { recursive: true });
    assert.throws(() => fs.readFileSync(folder), /EISDIR/);
    await assert.rejects(readBounded(folder, CAP, 'package-lock.json'), unsafe(/^package-lock\.json is a folder/));
  });

  it('a socket is refused without connecting', async () => {
    const socket = path.join(dir, 'pnpm-lock.yaml');
    const server = net.createServer((c) => c.end('hello'));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      await assert.rejects(readBounded(socket, CAP), unsafe(/socket/));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a file larger than the cap is refused from its size alone; one within it reads whole; a missing one is undefined', async () => {
    const big = path.join(dir, 'big.json');
    fs.writeFileSync(big, Buffer.alloc(CAP + 1, 'x'));
    await assert.rejects(readBounded(big, CAP), unsafe(new RegExp(`${CAP + 1} bytes \\(more than the ${CAP}`)));
    const small = path.join(dir, 'small.json');
    fs.writeFileSync(small, Buffer.alloc(CAP, 'y'));
    assert.deepEqual(await readBounded(small, CAP), fs.readFileSync(small));
    const hash = createHash('sha256');
    assert.equal(await hashBounded(small, CAP, hash, small, (size) => `blob ${size}\0`), CAP);
    assert.equal(hash.digest('hex'), createHash('sha256').update(`blob ${CAP}\0`).update(fs.readFileSync(small)).digest('hex'));
    assert.equal(await readBounded(path.join(dir, 'absent.json'), CAP), undefined);
  });
});
