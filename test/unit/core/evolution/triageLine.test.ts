import * as assert from 'node:assert/strict';
import { triageLine } from '../../../../src/core/evolution/ending';

describe("triage's line in the run's output", () => {
  it('on the offline demo, rants left new are explained once: scripted replies cannot sort them', () => {
    const line = triageLine([], 2, true);
    assert.match(line, /^0 rant\(s\) routed; the offline demo gives scripted replies and cannot sort rants: 2 left new\. Set candor\.baseUrl and candor\.model/);
    assert.doesNotMatch(line, /asked again on the next run/);
  });

  it('with a real model, the classes are counted and rants left new wait for the next run', () => {
    const line = triageLine([{ class: 'agent-code' }, { class: 'agent-code' }, { class: 'confusion' }], 1, false);
    assert.equal(line, '3 rant(s) routed (2 agent-code, 1 confusion); 1 left new, to be asked again on the next run');
  });

  it('on the offline demo with nothing left new, nothing is explained', () => {
    assert.equal(triageLine([{ class: 'user-project' }], 0, true), '1 rant(s) routed (1 user-project); 0 left new, to be asked again on the next run');
  });
});
