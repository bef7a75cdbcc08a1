import * as assert from 'node:assert/strict';
import { ServerLog } from '../../../../src/core/mcp/serverLog';
import { SecretSet } from '../../../../src/core/redact';
import { MemoryLogger } from '../../../helpers/core';

/** The server log's window on a clock the test moves: counts, not milliseconds. */
describe('MCP server log: 200 lines per ten seconds, the rest counted', () => {
  it('lets 200 lines of a flood through, then counts what it dropped on the first line of the next window', () => {
    const log = new MemoryLogger();
    let now = 1_000_000;
    const serverLog = new ServerLog(log, new SecretSet(), 'mcp flood:', () => now);
    for (let i = 0; i < 5000; i++) serverLog.line(`flood line ${i}`, 'stderr');
    assert.equal(log.lines.length, 200);
    assert.equal(log.lines[199], '[info] mcp flood: stderr: flood line 199');
    now += 9_999;
    serverLog.line('still the same window', 'stderr');
    assert.equal(log.lines.length, 200, 'a line just before the window ends is dropped too');
    now += 1;
    serverLog.line('the next window', 'stderr');
    assert.deepEqual(log.lines.slice(200), ['[info] mcp flood: stderr (4801 earlier lines not logged): the next window']);
    assert.deepEqual(serverLog.recent(), ['flood line 4997', 'flood line 4998', 'flood line 4999', 'still the same window', 'the next window'], 'the last lines are kept for a start error, dropped or not');
  });
});
