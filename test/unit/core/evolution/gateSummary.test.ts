import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseGateSummary } from '../../../../src/core/evolution/gateSummary';

/** Runs a real test runner on `files` in a temp folder; its stdout and stderr together, as the gate's tail has them. */
function runReal(files: Record<string, string>, command: (dir: string) => string[], env: NodeJS.ProcessEnv = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-summary-'));
  try {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const [file = '', ...args] = command(dir);
    const ran = spawnSync(file, args, { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, ...env } });
    return `${ran.stdout}${ran.stderr}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const MOCHA = require.resolve('mocha/bin/mocha.js');
const mocha = (...flags: string[]) => (dir: string): string[] => [process.execPath, MOCHA, '--no-config', ...flags, path.join(dir, 'a.test.js')];
const nodeTest = (...flags: string[]) => (dir: string): string[] => [process.execPath, '--test', ...flags, path.join(dir, 'a.test.js')];

/** Two passing, one pending, two failing; a passing test prints a summary of its own, and a failure message holds another. */
const MOCHA_SUITE = `const assert = require('assert');
describe('s', () => {
  it('passes', () => { console.log('  99 passing (1ms)\\n  0 failing'); });
  it('passes too', () => {});
  it.skip('skipped', () => {});
  it('fails', () => { assert.fail('line one\\n  7 passing (2ms)\\n  0 failing\\nlast'); });
  it('fails 2', () => { throw new Error('boom'); });
});
`;

/** One pass, one fail, one skip, one todo; the passing test and the failure imitate both TAP and spec summaries. */
const NODE_SUITE = `const test = require('node:test');
const assert = require('assert');
test('passes', () => { console.log('# tests 9\\n# pass 99\\n# fail 0\\nℹ tests 9\\nℹ pass 99\\nℹ fail 0'); });
test('skipped', { skip: true }, () => {});
test('todo', { todo: true }, () => {});
test('fails', () => { assert.fail('one\\n# tests 7\\n# pass 7\\n# fail 0\\nℹ tests 7\\nℹ pass 7\\nℹ fail 0'); });
`;

describe('parseGateSummary: what the test runner says it ran', function () {
  this.timeout(60_000);

  describe('real runs of mocha and node\'s test runner, with tests that imitate a summary', () => {
    it('mocha (spec): the runner\'s own epilogue, not the one a test printed nor the one in a failure message', () => {
      const out = runReal({ 'a.test.js': MOCHA_SUITE }, mocha());
      assert.match(out, /99 passing[\s\S]*2 passing[\s\S]*7 passing/, 'the trap: both imitations are in the output, before and after');
      assert.deepEqual(parseGateSummary(out), { runner: 'mocha', passing: 2, failing: 2, skipped: 1 });
    });

    it('mocha in colour, and with the dot reporter', () => {
      const coloured = runReal({ 'a.test.js': MOCHA_SUITE }, mocha('--color'));
      assert.ok(coloured.includes('\u001b['), 'escapes are there');
      assert.deepEqual(parseGateSummary(coloured), { runner: 'mocha', passing: 2, failing: 2, skipped: 1 });
      assert.deepEqual(parseGateSummary(runReal({ 'a.test.js': MOCHA_SUITE }, mocha('--reporter', 'dot'))), { runner: 'mocha', passing: 2, failing: 2, skipped: 1 });
    });

    it('mocha, all passing: nothing may follow the epilogue', () => {
      const suite = "describe('s', () => { it('a', () => console.log('  5 passing (1ms)')); it('b', () => {}); it.skip('c', () => {}); });\n";
      const out = runReal({ 'a.test.js': suite }, mocha());
      assert.deepEqual(parseGateSummary(out), { runner: 'mocha', passing: 2, failing: 0, skipped: 1 });
      assert.equal(parseGateSummary(`${out}\ndone\n`), undefined, 'a summary followed by other output is not the end of the output');
    });

    it('node --test (TAP, as when piped): pass, fail, skipped and todo; the imitations are ignored', () => {
      const out = runReal({ 'a.test.js': NODE_SUITE }, nodeTest());
      assert.match(out, /# pass 99[\s\S]*# pass 7/, 'the trap: both imitations are in the output');
      assert.deepEqual(parseGateSummary(out), { runner: 'node', passing: 1, failing: 1, skipped: 2 });
    });

    it('node --test with the spec reporter, in colour: the ℹ lines, then its list of failing tests', () => {
      const out = runReal({ 'a.test.js': NODE_SUITE }, nodeTest('--test-reporter=spec'), { FORCE_COLOR: '1' });
      assert.ok(out.includes('\u001b['), 'escapes are there');
      assert.deepEqual(parseGateSummary(out), { runner: 'node', passing: 1, failing: 1, skipped: 2 });
    });

    it('two suites in one gate (`mocha; node --test`): the last one\'s summary, the only one at the end', () => {
      const passing = runReal({ 'a.test.js': "describe('s', () => { it('a', () => {}); });\n" }, mocha());
      const failing = runReal({ 'a.test.js': MOCHA_SUITE }, mocha());
      const second = runReal({ 'a.test.js': NODE_SUITE }, nodeTest());
      assert.deepEqual(parseGateSummary(passing + second), { runner: 'node', passing: 1, failing: 1, skipped: 2 });
      // mocha's failure list may hold any text, so what follows it could be part of it: two candidates, no answer.
      assert.equal(parseGateSummary(failing + second), undefined);
    });
  });

  describe('jest, vitest and pytest: fixtures in their exact formats (jest and vitest are not installed here)', () => {
    // jest's default reporter, as packages/jest-reporters/src/getSummary.ts prints it, after a failure and a console.log.
    const JEST = ` FAIL  test/sum.test.js
  ● sum › adds badly

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

      at Object.toBe (test/sum.test.js:5:19)

  console.log
    Tests:       99 passed, 99 total

      at Object.log (test/other.test.js:3:13)

 PASS  test/other.test.js

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 2 skipped, 5 passed, 8 total
Snapshots:   0 total
Time:        1.234 s
Ran all test suites.
`;

    it('jest: `Tests:       1 failed, 2 skipped, 5 passed, 8 total`; a console.log of a summary line is indented, not it', () => {
      assert.deepEqual(parseGateSummary(JEST), { runner: 'jest', passing: 5, failing: 1, skipped: 2 });
      const coloured = JEST.replace('Tests:       1 failed', '\u001b[1mTests:       \u001b[22m\u001b[1m\u001b[31m1 failed\u001b[39m\u001b[22m');
      assert.deepEqual(parseGateSummary(coloured), { runner: 'jest', passing: 5, failing: 1, skipped: 2 });
      const todo = JEST.replace('Tests:       1 failed, 2 skipped, 5 passed, 8 total', 'Tests:       2 skipped, 1 todo, 5 passed, 8 total');
      assert.deepEqual(parseGateSummary(todo), { runner: 'jest', passing: 5, failing: 0, skipped: 3 });
    });

    // vitest's default reporter, as packages/vitest/src/node/reporters/base.ts prints it (titles padded to 11).
    const VITEST = ` ❯ test/sum.test.ts (3 tests | 1 failed | 1 skipped) 5ms
   × sum > adds badly 3ms
     → expected 3 to be 4 // Object.is equality
stdout | test/other.test.ts > prints
      Tests  99 passed (99)

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/sum.test.ts > sum > adds badly
AssertionError: expected 3 to be 4 // Object.is equality
 ❯ test/sum.test.ts:5:19

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed | 1 passed (2)
      Tests  2 failed | 5 passed | 1 skipped (8)
   Start at  12:00:00
   Duration  1.23s (transform 20ms, setup 0ms, collect 30ms, tests 5ms, environment 0ms, prepare 100ms)

`;

    it('vitest: `Tests  2 failed | 5 passed | 1 skipped (8)`, not the line a test printed', () => {
      assert.deepEqual(parseGateSummary(VITEST), { runner: 'vitest', passing: 5, failing: 2, skipped: 1 });
      const todo = VITEST.replace('2 failed | 5 passed | 1 skipped (8)', '5 passed | 1 skipped | 2 todo (8)');
      assert.deepEqual(parseGateSummary(todo), { runner: 'vitest', passing: 5, failing: 0, skipped: 3 });
    });

    // The end of a real pytest 9.0.3 run (produced once by hand; pytest is no dependency of Candor's suite).
    const PYTEST = `test_x.py .FsxFE.                                                          [100%]

=================================== FAILURES ===================================
__________________________________ test_fail ___________________________________

>   def test_fail(): assert False, "1 passed in 0.01s"
E   AssertionError: 1 passed in 0.01s
E   assert False

test_x.py:9: AssertionError
----------------------------- Captured stdout call -----------------------------
=== 99 passed in 0.01s ===
=========================== short test summary info ============================
FAILED test_x.py::test_fail - AssertionError: 1 passed in 0.01s
FAILED test_x.py::test_fail2 - ValueError: === 5 passed in 0.1s ===
ERROR test_x.py::test_err - RuntimeError: x
========== 2 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 0.90s ==========
`;

    it('pytest: the last line, failed and errors failing, skipped and xfailed skipped; the quiet form and "no tests ran"', () => {
      assert.deepEqual(parseGateSummary(PYTEST), { runner: 'pytest', passing: 2, failing: 3, skipped: 2 });
      const quiet = PYTEST.replace(/^=+ (2 failed.*) =+$/m, '$1');
      assert.deepEqual(parseGateSummary(quiet), { runner: 'pytest', passing: 2, failing: 3, skipped: 2 });
      assert.deepEqual(parseGateSummary('\n======================= 2 passed, 5 deselected, 1 warning in 0.52s ========================\n'), { runner: 'pytest', passing: 2, failing: 0, skipped: 5 });
      assert.deepEqual(parseGateSummary('============================ no tests ran in 0.01s =============================\n'), { runner: 'pytest', passing: 0, failing: 0, skipped: 0 });
      assert.equal(parseGateSummary('=== 3 passed, 2 exploded in 0.1s ===\n'), undefined, 'a word pytest does not print');
    });
  });

  describe('what it refuses to guess', () => {
    it('a failure message that ends the output with a summary of its own: two candidates, so no answer', () => {
      const suite = "describe('s', () => { it('passes', () => {}); it('fails last', () => { const e = new Error('x\\n\\n  9 passing (1ms)\\n'); e.stack = ''; throw e; }); });\n";
      const out = runReal({ 'a.test.js': suite }, mocha());
      assert.match(out, /1 passing[\s\S]*1 failing[\s\S]*9 passing \(1ms\)\n\s*$/, 'the trap: the imitation is the last summary-shaped block');
      assert.equal(parseGateSummary(out), undefined);
    });

    it('the cut first line of a tail is not read: "0 passed" may be the end of "10 passed"', () => {
      // pytest -q's last line, `10 passed, 1 skipped in 0.50s`, with the tail cut one character into it.
      const cut = '0 passed, 1 skipped in 0.50s\n';
      assert.deepEqual(parseGateSummary(cut), { runner: 'pytest', passing: 0, failing: 0, skipped: 1 }, 'the trap: read as a line, it is a summary');
      assert.equal(parseGateSummary(`[… 99,999 earlier bytes not kept]\n${cut}`), undefined);
    });

    it('no summary at all, an empty tail, and a tail that is only a marker of dropped output', () => {
      assert.equal(parseGateSummary(''), undefined);
      assert.equal(parseGateSummary('build ok\nexit 1\n'), undefined);
      assert.equal(parseGateSummary('[… 1,234 earlier bytes not kept]\nsrc/a.ts(1,1): error TS1005\n'), undefined);
    });

    it('a tail cut by the gate, CRLF line ends, and npm\'s closing lines still read', () => {
      const tail = '[… 99,999 earlier bytes not kept]\r\n  ✔ a\r\n\r\n  3 passing (12ms)\r\n  1 failing\r\n\r\n  1) a:\r\n     Error: x\r\n\r\nnpm error Lifecycle script `test` failed with error:\r\nnpm error code 1\r\n';
      assert.deepEqual(parseGateSummary(tail), { runner: 'mocha', passing: 3, failing: 1, skipped: 0 });
    });

    it('mocha\'s failure list must be numbered 1 to N for N failing', () => {
      const tail = '  3 passing (12ms)\n  2 failing\n\n  1) a:\n     Error: x\n';
      assert.equal(parseGateSummary(tail), undefined, 'two failing, one listed: not mocha\'s own list');
      assert.deepEqual(parseGateSummary(`${tail}\n  2) b:\n     Error: y\n`), { runner: 'mocha', passing: 3, failing: 2, skipped: 0 });
    });
  });
});
