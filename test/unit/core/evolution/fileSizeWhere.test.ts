import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { runGate, type GateResult } from '../../../../src/core/evolution/testGate';
import { whereFileSizeShows } from '../../../../src/core/evolution/fileSizeWhere';
import { NO_SANDBOX } from '../../../../src/core/sandbox/sandbox';
import { removeTempDirs, tempDir, write } from './helpers';

/**
 * The gate names where the file-size limit was hit, from what the command
 * printed: real programs run by the real gate under a 1 MiB limit
 * (RLIMIT_FSIZE through prlimit, which needs no privilege), outside the
 * sandbox so that it runs wherever the suite does.
 */
describe('the file-size limit names where it was hit', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir('candor-fsize-');
  });
  afterEach(() => removeTempDirs());

  const limits = { processes: 512, memoryMiB: 4096, fileSizeMiB: 1, diskMiB: 1024 };
  const gate = (command: string): Promise<GateResult> => runGate([{ name: 'test', command }], { sandbox: NO_SANDBOX, cwd: dir, timeoutMs: 30_000, limits });

  it("a shell's report of a command SIGXFSZ ended: the command", async () => {
    const result = await gate("bash -c 'head -c 2000000 /dev/zero > big.bin'");
    assert.equal(result.passed, false);
    assert.equal(result.limitHit, 'hit the file size limit (1 MiB): the command `head -c 2000000 /dev/zero > big.bin`', result.tail);
  });

  it("a program's refused write: its line, with the file it names", async () => {
    const result = await gate("trap '' XFSZ; cp /dev/zero big.bin");
    assert.equal(result.limitHit, `may have hit the file size limit (1 MiB): "cp: error writing 'big.bin': File too large"`, result.tail);
  });

  it("a mocha test's EFBIG: the error, the test's full title and the line of the test file that wrote", async () => {
    write(dir, 'big.test.js', "const fs = require('fs');\ndescribe('big files', () => {\n  it('makes one of 2 MB', () => {\n    fs.writeFileSync('big.bin', '');\n    fs.truncateSync('big.bin', 2e6);\n  });\n});\n");
    const mocha = path.join(path.dirname(require.resolve('mocha/package.json')), 'bin', 'mocha.js');
    const result = await gate(`node ${mocha} --reporter spec big.test.js`);
    assert.equal(result.passed, false);
    assert.equal(result.limitHit, `may have hit the file size limit (1 MiB): "Error: EFBIG: file too large, ftruncate" in the test "big files makes one of 2 MB" at big.test.js:5:8`, result.tail);
  });

  it('a failing suite whose test titles name EFBIG, but which hit no limit: no limit is named', async () => {
    write(dir, 'titles.test.js', "describe('EFBIG', () => {\n  it('reports EFBIG as a limit', () => { throw new Error('an ordinary failure'); });\n  it.skip('File too large is a sign', () => {});\n});\n");
    const mocha = path.join(path.dirname(require.resolve('mocha/package.json')), 'bin', 'mocha.js');
    const result = await gate(`node ${mocha} --reporter spec titles.test.js`);
    assert.equal(result.passed, false);
    assert.match(result.tail, /reports EFBIG as a limit/, 'the trap: the output holds the signs, in titles');
    assert.equal(result.limitHit, undefined, result.tail);
  });

  it('says nothing more when the output shows nothing, and quotes one clipped line of output that is hostile', () => {
    assert.equal(whereFileSizeShows('all fine\n'), undefined);
    // bash pads the pid to a width: a 4-digit pid comes after two spaces (seen inside the gate).
    assert.equal(whereFileSizeShows('bash: line 1:  2322 File size limit exceededhead -c 9 /dev/zero > big.bin\n'), 'the command `head -c 9 /dev/zero > big.bin`');
    const hostile = `\x1b[2JError: EFBIG: file too large, write \x01\x7f\x1b]0;title\x07 ${'A'.repeat(500)}\n`;
    const where = whereFileSizeShows(hostile) ?? assert.fail('no where');
    assert.ok(where.length <= 122 && [...where].every((c) => c.charCodeAt(0) >= 0x20), JSON.stringify(where));
  });
});
