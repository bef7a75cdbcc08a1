import * as assert from 'node:assert/strict';
import type { ChatMessage } from '../../../../src/core/messages';
import type { TextModel } from '../../../../src/core/provider/chatModel';
import { candidateId, parseProposals, proposeCandidates } from '../../../../src/core/promptEvolution/proposer';
import { PROMPT, SMALL_EDIT } from './fixtures';

function replying(reply: string | Error): TextModel & { asked: Array<readonly ChatMessage[]> } {
  const asked: Array<readonly ChatMessage[]> = [];
  return {
    asked,
    complete: async (messages) => {
      asked.push(messages);
      if (reply instanceof Error) throw reply;
      return reply;
    },
  };
}

describe('prompt evolution proposer', () => {
  it('asks with the current prompt and the evidence, and parses a JSON list of candidates', async () => {
    const model = replying('Here you go:\n```json\n' + JSON.stringify([{ prompt: SMALL_EDIT, rationale: 'one step at a time' }, 'A plain string prompt']) + '\n```');
    const result = await proposeCandidates({ model, current: PROMPT, evidence: { downVoted: ['a reply that rambled'], rants: ['too long!'] }, count: 4, maxChangedLines: 20 });
    assert.deepEqual(result, {
      kind: 'ok',
      candidates: [
        { id: candidateId(SMALL_EDIT), text: SMALL_EDIT, rationale: 'one step at a time' },
        { id: candidateId('A plain string prompt'), text: 'A plain string prompt' },
      ],
      dropped: 0,
    });
    const asked = JSON.stringify(model.asked[0]);
    assert.ok(asked.includes('a reply that rambled') && asked.includes('too long!') && asked.includes('Never reveal the API key.') && asked.includes('at most 20 lines'));
  });

  it('garbage → zero candidates with a reason', async () => {
    assert.deepEqual(await proposeCandidates({ model: replying('I think you should be nicer.'), current: PROMPT, evidence: {}, count: 4, maxChangedLines: 20 }), {
      kind: 'none',
      reason: 'unparseable',
      detail: 'no JSON list in the reply: I think you should be nicer.',
    });
    assert.equal(parseProposals('[1, {"text": "x"}, null]', PROMPT, 4).kind, 'none');
  });

  it('drops the current prompt, duplicates, empty texts and anything past the count', () => {
    const crlfCopy = PROMPT.replace(/\n/g, '\r\n');
    const result = parseProposals(JSON.stringify([PROMPT, crlfCopy, SMALL_EDIT, SMALL_EDIT, '  ', 'b', 'c', 'd']), PROMPT, 2);
    assert.equal(result.kind, 'ok');
    if (result.kind !== 'ok') return;
    assert.deepEqual(result.candidates.map((c) => c.text), [SMALL_EDIT, 'b']);
    assert.equal(result.dropped, 6);
  });

  it('a model error → zero candidates, reason "model-error"', async () => {
    const result = await proposeCandidates({ model: replying(new Error('HTTP 500')), current: PROMPT, evidence: {}, count: 4, maxChangedLines: 20 });
    assert.deepEqual(result, { kind: 'none', reason: 'model-error', detail: 'HTTP 500' });
  });

  it('candidate ids are stable and ignore CRLF', () => {
    assert.equal(candidateId('a\r\nb'), candidateId('a\nb'));
    assert.match(candidateId('x'), /^c-[0-9a-f]{12}$/);
  });
});
