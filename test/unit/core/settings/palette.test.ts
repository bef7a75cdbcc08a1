import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

// Typing "Candor: Rant" in the command palette and pressing Enter runs the
// first row. VS Code lists every command whose label matches the query as a
// prefix, as a contiguous substring, or word by word with gaps ("Candor: Rant"
// matches "Candor: Dismiss Rant"), and sorts the commands not used recently by
// label. So no other title that matches may sort before "Candor: Rant".

interface Command {
  readonly command: string;
  readonly title: string;
  readonly category?: string;
}

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as {
  contributes: { commands: Command[] };
};

/** Commands that other planned features add to the palette, so a new title cannot bring the collision back. */
const PLANNED_TITLES = ['Open Pull Request', 'Set GitHub Token', 'MCP Servers'];

const SEPARATORS = new Set('()[]{}<>`\'"-/;:,.?!'.split('').map((c) => c.charCodeAt(0)));
const isSeparator = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13 || SEPARATORS.has(code);
const sameChar = (a: number, b: number): boolean => a === b || (isSeparator(a) && isSeparator(b));

/** The next position at or after `start` where a word begins: a separator, or just after one. */
function nextWord(target: string, start: number): number {
  for (let i = start; i < target.length; i++) {
    if (isSeparator(target.charCodeAt(i)) || (i > 0 && isSeparator(target.charCodeAt(i - 1)))) return i;
  }
  return target.length;
}

/** The query's characters in order, each following the one before or starting a later word. */
function wordsFrom(query: string, target: string, i: number, j: number): boolean {
  if (i === query.length) return true;
  if (j === target.length) return false;
  if (!sameChar(query.charCodeAt(i), target.charCodeAt(j))) return false;
  if (wordsFrom(query, target, i + 1, j + 1)) return true;
  for (let next = nextWord(target, j + 1); next < target.length; next = nextWord(target, next + 1)) {
    if (wordsFrom(query, target, i + 1, next)) return true;
  }
  return false;
}

function matchesWords(query: string, label: string): boolean {
  const q = query.toLowerCase();
  const target = label.toLowerCase();
  for (let start = 0; start < target.length; start = nextWord(target, start + 1)) {
    if (wordsFrom(q, target, 0, start)) return true;
  }
  return false;
}

/** Whether the palette lists `label` for `query`: prefix, words with gaps, or contiguous substring. */
function paletteMatches(query: string, label: string): boolean {
  const q = query.toLowerCase();
  const l = label.toLowerCase();
  return l.startsWith(q) || matchesWords(query, label) || l.includes(q);
}

const label = (c: Pick<Command, 'title' | 'category'>): string => (c.category ? `${c.category}: ${c.title}` : c.title);

describe('the command palette: "Candor: Rant" and Enter runs Rant', () => {
  it('the matcher is the palette\'s: the old title "Dismiss Rant" matched and sorted first (the collision seen)', () => {
    // What a fresh profile showed: both rows, Dismiss Rant on top.
    assert.ok(paletteMatches('Candor: Rant', 'Candor: Dismiss Rant'));
    assert.ok(paletteMatches('Candor: Rant', 'Candor: Rant'));
    assert.ok('Candor: Dismiss Rant'.localeCompare('Candor: Rant') < 0);
    // And it is not a match-everything: the words must start where the query's letters are.
    assert.ok(!paletteMatches('Candor: Rant', 'Candor: Run Evolution'));
    assert.ok(!paletteMatches('Candor: Rant', 'Candor: Roll Back Prompt'));
    assert.ok(paletteMatches('Candor: Rant', 'Candor: Rate and Note Things'), 'R, a, n, t from the starts of words');
  });

  it('no title that matches "Candor: Rant" sorts before it, with the planned commands too', () => {
    const commands = manifest.contributes.commands;
    const rant = commands.find((c) => c.command === 'candor.rant');
    assert.ok(rant, 'candor.rant is contributed');
    const rantLabel = label(rant);
    assert.equal(rantLabel, 'Candor: Rant');
    const labels = [...commands.map(label), ...PLANNED_TITLES.map((title) => `Candor: ${title}`)];
    const listed = labels.filter((l) => paletteMatches(rantLabel, l));
    const sorted = [...listed].sort((a, b) => a.localeCompare(b));
    assert.equal(sorted[0], rantLabel, `the palette's first row for "${rantLabel}": ${JSON.stringify(sorted)}`);
  });

  it('Dismiss keeps its command id, and is still found by "dismiss"', () => {
    const dismiss = manifest.contributes.commands.find((c) => c.command === 'candor.dismissRant');
    assert.ok(dismiss);
    assert.ok(paletteMatches('Candor: dismiss', label(dismiss)));
    assert.ok(paletteMatches('rant', label(dismiss)));
  });
});
