import assert from 'node:assert/strict';
import { test } from 'node:test';
import { wordCount } from '../src/wordCount.js';

test('counts words separated by spaces', () => {
  assert.equal(wordCount('the quick  brown fox'), 4);
});

test('counts nothing in an empty or blank text', () => {
  assert.equal(wordCount(''), 0);
  assert.equal(wordCount('  \n\t '), 0);
});

test('counts each CJK character as a word', () => {
  assert.equal(wordCount('日本語'), 3);
  assert.equal(wordCount('한국어 text'), 4);
});
