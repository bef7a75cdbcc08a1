import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseScenario, ScenarioError } from '../../../../src/core/offline/scenario';
import { demoScenario } from '../../../../src/core/offline/demoScenario';

describe('offline scenario files', () => {
  const dir = path.resolve(__dirname, '../../../fixtures/scenarios');
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    it(`${name} is a valid scenario`, () => {
      const scenario = parseScenario(JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')), name);
      assert.ok(scenario.rules.length > 0);
    });
  }

  it('the built-in demo is valid and ends with a catch-all rule', () => {
    const scenario = parseScenario(JSON.parse(JSON.stringify(demoScenario)));
    assert.equal(scenario.rules.at(-1)?.match, undefined);
  });

  for (const [what, json, where] of [
    ['no rules', { rules: [] }, /non-empty/],
    ['a bad regular expression', { rules: [{ match: { user: '(' }, respond: { text: 'x' } }] }, /rules\[0\]\.match\.user is not a valid regular expression/],
    ['a respond without a kind', { rules: [{ respond: {} }] }, /needs "text", "toolCalls" or "error"/],
    ['a negative holdMs', { rules: [{ respond: { text: 'x' }, holdMs: -1 }] }, /holdMs must be a number >= 0/],
    ['an error without a status', { rules: [{ respond: { error: {} } }] }, /error\.status must be a number/],
  ] as const) {
    it(`refuses ${what}, naming the place`, () => {
      assert.throws(() => parseScenario(json, 'file.json'), (err: unknown) => err instanceof ScenarioError && where.test(err.message));
    });
  }
});
