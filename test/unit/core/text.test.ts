import * as assert from 'node:assert/strict';
import { clip, extractJson, firstLine, isRecord } from '../../../src/core/text';

// The two extractors the core had before there was one, kept here as the
// oracle: every reply either of them accepted must still parse, to the same
// value, through the one that replaced them.

/** The triage's: fences removed, then from the first bracket to the last, objects first. */
function triageExtractorBefore(reply: string): unknown {
  const text = reply.replace(/```(?:json)?/gi, '').trim();
  for (const open of ['{', '[']) {
    const start = text.indexOf(open);
    const end = text.lastIndexOf(open === '{' ? '}' : ']');
    if (start === -1 || end <= start) continue;
    try {
      return JSON.parse(text.slice(start, end + 1)) as unknown;
    } catch {
      // the other bracket
    }
  }
  return undefined;
}

/** Prompt evolution's: the whole reply, each fenced block, each balanced span, of the wanted shape. */
function promptExtractorBefore(reply: string, shape: 'object' | 'array'): unknown {
  const open = shape === 'object' ? '{' : '[';
  const candidates = [reply.trim(), ...[...reply.matchAll(/```[a-zA-Z]*\s*\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').trim())];
  for (let start = reply.indexOf(open); start >= 0; start = reply.indexOf(open, start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < reply.length; i++) {
      const ch = reply[i];
      if (inString) {
        if (ch === '\\') i++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) {
          candidates.push(reply.slice(start, i + 1));
          break;
        }
      }
    }
  }
  for (const candidate of candidates) {
    try {
      const value = JSON.parse(candidate) as unknown;
      if (shape === 'array' ? Array.isArray(value) : isRecord(value)) return value;
    } catch {
      // next candidate
    }
  }
  return undefined;
}

/** Replies models give (and that the tests of triage and prompt evolution feed in). */
const CORPUS: readonly string[] = [
  '{"rants":[{"id":"r1","class":"agent-behaviour","note":"asks too much"}]}',
  '[{"id":"r1","class":"agent-code","note":"crash"},{"id":"r2","class":"confusion","answer":"Use Select Model."}]',
  '```json\n{"rants":[{"id":"r1","class":"user-project"}]}\n```',
  '```\n[{"id":"r1","class":"agent-code"}]\n```',
  '```JSON\n{"score": 4, "reason": "clear"}\n```',
  'Here is the triage:\n```json\n[{"id":"r1","class":"agent-code"}]\n```\nLet me know if you need more.',
  'Sure! {"score": 3, "reason": "partly right"} Hope that helps.',
  'The answer is [1, 2, 3] as asked.',
  '{"prompt": "You are Candor.\\nBe brief.", "rationale": "shorter"}',
  'Thinking… {"a": {"b": [1, {"c": "}"}]}} done',
  '  \n{"ok":true}\n  ',
  '```json {"inline": "fence without a newline"}```',
  'Two answers: {"first": 1} and {"second": 2}',
  'Result:\n[{"id":"only","class":"confusion","answer":"It is in the README."}]',
  '{"rants": []}',
  '{"text": "quote \\" and brace { inside"}',
  '[]',
];

describe('extractJson: one extractor, as lenient as the two it replaced', () => {
  it('parses every reply the triage extractor accepted, to the same value', () => {
    let accepted = 0;
    for (const reply of CORPUS) {
      const before = triageExtractorBefore(reply);
      if (before === undefined) continue;
      accepted++;
      assert.deepEqual(extractJson(reply, Array.isArray(before) ? 'array' : 'object'), before, reply);
    }
    assert.ok(accepted >= 12, `the corpus holds ${accepted} replies the triage extractor accepted`);
  });

  it('parses every reply the prompt-evolution extractor accepted, to the same value, for both shapes', () => {
    let accepted = 0;
    for (const reply of CORPUS) {
      for (const shape of ['object', 'array'] as const) {
        const before = promptExtractorBefore(reply, shape);
        if (before === undefined) continue;
        accepted++;
        assert.deepEqual(extractJson(reply, shape), before, `${shape}: ${reply}`);
      }
    }
    assert.ok(accepted >= 14, `the corpus holds ${accepted} replies the prompt-evolution extractor accepted`);
  });

  it('reads what the triage extractor lost: two objects in prose, a fence marker inside a string', () => {
    assert.equal(triageExtractorBefore('Two: {"first": 1} and {"second": 2}'), undefined);
    assert.deepEqual(extractJson('Two: {"first": 1} and {"second": 2}', 'object'), { first: 1 });
    const fenceInString = '```json\n{"x": "a ``` inside"}\n```';
    assert.deepEqual(triageExtractorBefore(fenceInString), { x: 'a  inside' });
    assert.deepEqual(extractJson(fenceInString, 'object'), { x: 'a ``` inside' });
  });

  it('returns undefined when nothing of the shape is there', () => {
    assert.equal(extractJson('no JSON here', 'object'), undefined);
    assert.equal(extractJson('{"an": "object"}', 'array'), undefined);
    assert.equal(extractJson('{"cut": "short', 'object'), undefined);
  });
});

describe('clip, firstLine, isRecord', () => {
  it('clip keeps a short text and cuts a long one to exactly max characters, ending in an ellipsis', () => {
    assert.equal(clip('short', 10), 'short');
    assert.equal(clip('0123456789', 10), '0123456789');
    assert.equal(clip('0123456789A', 10), '012345678…');
    assert.equal(clip('0123456789A', 10).length, 10);
  });

  it('firstLine skips blank lines, trims, and clips', () => {
    assert.equal(firstLine('\n\n  error: boom  \nstack', 100), 'error: boom');
    assert.equal(firstLine('x'.repeat(150), 100), `${'x'.repeat(99)}…`);
    assert.equal(firstLine('', 10), '');
  });

  it('isRecord is true for objects only', () => {
    assert.equal(isRecord({}), true);
    assert.equal(isRecord([]), false);
    assert.equal(isRecord(null), false);
    assert.equal(isRecord('{}'), false);
  });
});
