import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { coverLeaked, scan } from '../../../../src/core/sandbox/inheritedFds';
import { removeTempDirs, tempDir, write, skipUnlessSandbox } from '../evolution/helpers';

/** Where the child is handed the descriptor: past every number the gate uses for its own (3–8). */
const LEAKED_FD = 20;
const CHILD = path.join(__dirname, 'leakedFdChild.ts');

/** Runs leakedFdChild.ts with `fd` open at LEAKED_FD, without close-on-exec, as a parent process would leave it. */
function childWith(fd: number, ...args: string[]): string {
  const stdio = ['ignore', 'pipe', 'pipe', ...new Array<'ignore'>(LEAKED_FD - 3).fill('ignore'), fd] as const;
  const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', CHILD, ...args], { stdio: [...stdio], encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

describe('descriptors handed to Candor without close-on-exec never reach a sandboxed command', function () {
  this.timeout(90_000);
  afterEach(() => removeTempDirs());

  it('scan finds what a process inherited open, and none of the descriptors Node opens itself', async () => {
    const file = path.join(tempDir('candor-fds-'), 'held');
    fs.writeFileSync(file, 'x');
    const fd = fs.openSync(file, 'r');
    const own = fs.openSync(file, 'r');
    try {
      // A child's slot 7 is dup2'ed without close-on-exec, as a launcher hands one down.
      const child = spawn('sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', fd] });
      try {
        await new Promise((resolve) => child.once('spawn', resolve));
        assert.ok(scan(`/proc/${child.pid}`).includes(7), 'the inherited descriptor is found');
      } finally {
        child.kill('SIGKILL');
      }
      assert.ok(!scan('/proc/self').includes(own), "a descriptor Node opened is close-on-exec and needs no cover");
    } finally {
      fs.closeSync(fd);
      fs.closeSync(own);
    }
  });

  it('coverLeaked puts /dev/null at each leaked number past the given stdio, ignores the gaps, and keeps the rest', () => {
    const covered = coverLeaked(['ignore', 'pipe', 'pipe', 9], [2, 3, 7]);
    try {
      assert.deepEqual(covered.stdio.slice(0, 4), ['ignore', 'pipe', 'pipe', 9], 'what the caller passes stays');
      assert.deepEqual(covered.stdio.slice(4, 7), ['ignore', 'ignore', 'ignore']);
      const devNull = covered.stdio[7];
      assert.equal(typeof devNull, 'number');
      assert.equal(fs.readlinkSync(`/proc/self/fd/${String(devNull)}`), '/dev/null');
      assert.equal(covered.stdio.length, 8);
    } finally {
      covered.close();
    }
    assert.deepEqual(coverLeaked(['ignore', 'pipe', 'pipe'], []).stdio, ['ignore', 'pipe', 'pipe'], 'nothing leaked, nothing added');
  });

  describe('a folder the sandbox hides, reached through a leaked descriptor', () => {
    before(async function () {
      await skipUnlessSandbox(this);
    });

    it('a plain child reads the hidden file through it (the trap armed); a gate command gets /dev/null there', () => {
      // Readable by anyone, so the gate user too could read it if the descriptor reached it.
      const hidden = tempDir('candor-hidden-');
      fs.chmodSync(hidden, 0o755);
      write(hidden, 'secret.txt', 'the-hidden-secret\n');
      fs.chmodSync(path.join(hidden, 'secret.txt'), 0o644);
      const clone = path.join(tempDir('candor-data-'), 'scratch', 'repo');
      write(clone, '.git/HEAD', 'ref: refs/heads/main\n');
      const folder = fs.openSync(hidden, 'r');
      try {
        assert.match(childWith(folder, 'plain', clone, String(LEAKED_FD)), /the-hidden-secret/, 'a plain child of a process handed the descriptor reads the file');
        const gate = childWith(folder, 'gate', clone, String(LEAKED_FD));
        assert.doesNotMatch(gate, /the-hidden-secret/, 'the gate command read the hidden file');
        assert.match(gate, new RegExp(`nothing at fd ${LEAKED_FD}\\n/dev/null`), 'it finds /dev/null at that number');
      } finally {
        fs.closeSync(folder);
      }
    });
  });
});
