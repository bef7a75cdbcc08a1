import * as assert from 'node:assert/strict';
import { isKindError } from '../../../src/core/kindError';
import { GitGuardError } from '../../../src/core/git/errors';
import { EvolutionError } from '../../../src/core/evolution/errors';
import { PartialReplyError, RequestError } from '../../../src/core/provider/requestError';
import { failureEnding } from '../../../src/core/evolution/ending';

describe('one error base: a kind for code, a message for people', () => {
  it('tells the class and, when asked, the kind', () => {
    const err = new GitGuardError('dirty', 'the workspace has changes');
    assert.equal(isKindError(err, GitGuardError), true);
    assert.equal(isKindError(err, GitGuardError, 'dirty', 'exists'), true);
    assert.equal(isKindError(err, GitGuardError, 'exists'), false);
    assert.equal(isKindError(err, EvolutionError), false, 'another class with a kind of the same shape is not it');
    assert.equal(isKindError(new Error('plain'), GitGuardError), false);
    assert.equal(isKindError('dirty', GitGuardError), false);
  });

  it('keeps its name, message and stack, and a subclass is its parent too', () => {
    const err = new EvolutionError('refused', 'not a git repository');
    assert.equal(err.name, 'EvolutionError');
    assert.equal(err.message, 'not a git repository');
    assert.match(String(err.stack), /EvolutionError: not a git repository/);
    const partial = new PartialReplyError(new RequestError('cut', 'stream ended', undefined, undefined, 'http://127.0.0.1:1/v1'), 'half a reply');
    assert.equal(isKindError(partial, RequestError, 'cut'), true);
    assert.equal(partial.url, 'http://127.0.0.1:1/v1');
  });

  it("an evolution run that is refused ends as an error with the refusal's own words", () => {
    const ending = failureEnding(new EvolutionError('refused', '/tmp/x is not a git repository'), { phase: 'triage', cancelled: false, cloned: false });
    assert.deepEqual(ending, { outcome: 'error', reason: '/tmp/x is not a git repository' });
    const request = failureEnding(new RequestError('http', 'overloaded', 503), { phase: 'change', cancelled: false, cloned: true });
    assert.equal(request.reason, 'the model request failed during change: http 503 — overloaded');
  });
});
