import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatMessage } from '../../../../src/core/messages';
import type { TextModel } from '../../../../src/core/provider/chatModel';
import { exactScore, jsonScore, parseJudgeScore, scoreReply } from '../../../../src/core/promptEvolution/scorers';
import { parseTaskSets, readTaskSets, taskSetHash, type EvalTask } from '../../../../src/core/promptEvolution/taskSet';

/** A judge that answers from a fixed reply and remembers what it was asked. */
function fixedJudge(reply: string): TextModel & { asked: Array<readonly ChatMessage[]> } {
  const asked: Array<readonly ChatMessage[]> = [];
  return { asked, complete: async (messages) => (asked.push(messages), reply) };
}

describe('prompt evolution scorers and task sets', () => {
  describe('scorers', () => {
    it('exact: 0/1 on the trimmed text', () => {
      assert.deepEqual(exactScore('42', '  42\n'), { score: 1 });
      assert.deepEqual(exactScore('42', '42.'), { score: 0 });
      assert.deepEqual(exactScore(7, '7'), { score: 1 });
    });

    it('json: the fraction of expected fields equal in the extracted object', () => {
      const expected = { name: 'Ada', year: 1815, tags: ['math'] };
      assert.deepEqual(jsonScore(expected, '{"name":"Ada","year":1815,"tags":["math"]}'), { score: 1 });
      assert.deepEqual(jsonScore(expected, 'Sure!\n```json\n{"name": "Ada", "year": 1816, "tags": ["math"], "extra": 1}\n```'), { score: 2 / 3 });
      assert.deepEqual(jsonScore(expected, 'Here: {"name": "Ada", "note": "a } in a string"} done'), { score: 1 / 3 });
      assert.deepEqual(jsonScore(expected, 'no json here'), { score: 0, note: 'no JSON object in the reply' });
    });

    it('judge: asks the model with the rubric and parses a 0..1 number', async () => {
      const task: EvalTask = { id: 'j', input: 'Explain X', expected: 'X is Y', scorer: 'judge', rubric: 'Mentions Y' };
      const judge = fixedJudge('Score: 0.75');
      assert.deepEqual(await scoreReply(task, 'X is Y because…', { judge }), { score: 0.75 });
      const prompt = JSON.stringify(judge.asked[0]);
      assert.ok(prompt.includes('Mentions Y') && prompt.includes('X is Y because') && prompt.includes('Reference answer'));
    });

    it('judge: unparseable or out of range → 0 with a note', () => {
      assert.equal(parseJudgeScore('great answer').score, 0);
      assert.match(parseJudgeScore('great answer').note ?? '', /unparseable/);
      assert.match(parseJudgeScore('8').note ?? '', /out of 0\.\.1/);
      assert.deepEqual(parseJudgeScore('1'), { score: 1 });
      assert.deepEqual(parseJudgeScore('.5'), { score: 0.5 });
    });
  });

  describe('task sets', () => {
    const good = [
      { id: 'a', input: 'What is 6*7?', expected: '42', scorer: 'exact' },
      { id: 'b', input: 'Extract', expected: { name: 'Ada' }, scorer: 'json' },
      { id: 'c', input: 'Explain', expected: null, scorer: 'judge', rubric: 'Is clear' },
    ];

    it('parses tasks; corrupt lines and invalid or repeated tasks are skipped and counted', () => {
      const text = [
        JSON.stringify(good[0]),
        '{not json',
        '[1,2]',
        JSON.stringify({ id: 'x', input: 'hi', scorer: 'fuzzy' }),
        JSON.stringify({ id: 'y', input: 'hi', scorer: 'judge' }),
        JSON.stringify(good[1]),
        JSON.stringify({ ...good[0], input: 'again' }),
        JSON.stringify(good[2]),
        '{"id": "cut", "inp',
      ].join('\n');
      const set = parseTaskSets([{ file: 'e.jsonl', text }]);
      assert.deepEqual(set.tasks.map((t) => t.id), ['a', 'b', 'c']);
      assert.deepEqual(
        set.skipped.map((s) => [s.lineNumber, s.reason]),
        [[2, 'not-json'], [3, 'not-object'], [9, 'truncated'], [4, 'invalid-task'], [5, 'invalid-task'], [7, 'duplicate-id']],
      );
    });

    it('the hash ignores file order, key order and line endings, and changes with any task', () => {
      const one = parseTaskSets([{ file: '1.jsonl', text: good.map((t) => JSON.stringify(t)).join('\n') }]);
      const reordered = parseTaskSets([
        { file: '2.jsonl', text: `${JSON.stringify({ scorer: 'json', expected: { name: 'Ada' }, input: 'Extract', id: 'b' })}\r\n` },
        { file: '1.jsonl', text: [good[2], good[0]].map((t) => JSON.stringify(t)).join('\r\n') },
      ]);
      assert.equal(one.hash, reordered.hash);
      assert.match(one.hash, /^[0-9a-f]{64}$/);
      assert.notEqual(taskSetHash([...one.tasks.slice(1), { ...(one.tasks[0] as EvalTask), expected: '43' }]), one.hash);
    });

    it('reads every *.jsonl of a folder; a missing folder is an empty set', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-evals-'));
      try {
        fs.writeFileSync(path.join(dir, 'b.jsonl'), JSON.stringify(good[1]) + '\n');
        fs.writeFileSync(path.join(dir, 'a.jsonl'), JSON.stringify(good[0]) + '\n');
        fs.writeFileSync(path.join(dir, 'notes.md'), 'not a task file');
        const set = readTaskSets(dir);
        assert.deepEqual(set.tasks.map((t) => t.id), ['a', 'b']);
        assert.deepEqual(set.files.map((f) => path.basename(f)), ['a.jsonl', 'b.jsonl']);
        assert.equal(readTaskSets(path.join(dir, 'missing')).tasks.length, 0);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
