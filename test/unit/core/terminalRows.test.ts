import * as assert from 'node:assert/strict';
import { CONTINUATION_PREFIX, STREAM_PREFIX, TerminalRows } from '../../../src/core/terminalRows';

/** The rows a terminal of `width` columns shows for `written`, if it wrapped nothing itself (each row's length checked below). */
function rows(written: string): string[] {
  return written.split('\n');
}

/** Columns as TerminalRows counts them at most: printable ASCII one, anything else two. */
function columns(row: string): number {
  let n = 0;
  for (const char of row) n += /^[\x20-\x7e]$/.test(char) ? 1 : 2;
  return n;
}

// A gate's test printing a line Candor would print, then hiding what follows.
const FAKE = 'outcome: shipped — rant 01j addressed\n\u001b[8mconcealed\u001b[0m\n';

describe('terminal rows: streamed output cannot pass for Candor\'s own lines', () => {
  it('the trap, armed: written as it came, the fake outcome starts a row and its escapes reach the terminal', () => {
    const raw = `gate output\n${FAKE}`;
    assert.ok(rows(raw).some((row) => row.startsWith('outcome:')));
    assert.ok(raw.includes('\u001b[8m'));
  });

  it('prefixes every row of streamed output, shows its escapes, and leaves Candor\'s own lines at the left edge', () => {
    const terminal = new TerminalRows();
    const written = terminal.own('── gate\n') + terminal.stream(`gate output\n${FAKE}`) + terminal.own('outcome: discarded — the change fails the gate\n');
    assert.deepEqual(rows(written), [
      '── gate',
      `${STREAM_PREFIX}gate output`,
      `${STREAM_PREFIX}outcome: shipped — rant 01j addressed`,
      `${STREAM_PREFIX}␛[8mconcealed␛[0m`,
      'outcome: discarded — the change fails the gate',
      '',
    ]);
  });

  it('keeps the prefix on rows that arrive in pieces, and ends an open row before a line of Candor\'s', () => {
    const terminal = new TerminalRows();
    let written = '';
    for (const piece of ['par', 'tial\nout', 'come: shipped', '\n\nlast without newline']) written += terminal.stream(piece);
    written += terminal.own('gate failed\n');
    assert.deepEqual(rows(written), [`${STREAM_PREFIX}partial`, `${STREAM_PREFIX}outcome: shipped`, STREAM_PREFIX, `${STREAM_PREFIX}last without newline`, 'gate failed', '']);
  });

  it('breaks streamed rows at the terminal\'s width itself, so no row the terminal shows starts without the prefix', () => {
    // Tried: output padded so that the terminal's own wrap puts `outcome: shipped` at the start of a row.
    const width = 40;
    const padded = `${'x'.repeat(width - 2)}outcome: shipped — forged\n${'é'.repeat(30)}outcome: shipped\n\t\t\t\t\toutcome: shipped\n`;
    const shown = rows(new TerminalRows(() => width).stream(padded));
    assert.equal(shown.pop(), '');
    assert.equal(shown.length, 7);
    for (const row of shown) {
      assert.ok(row.startsWith(STREAM_PREFIX), JSON.stringify(row));
      assert.ok(columns(row) <= width, `${JSON.stringify(row)} fits in ${width} columns`);
    }
    // Every character shown; the five tabs as the spaces to their stops (3 → 8 → 16 → 24 → 32 → 40), the row then full.
    const expected = `${'x'.repeat(width - 2)}outcome: shipped — forged${'é'.repeat(30)}outcome: shipped${' '.repeat(37)}outcome: shipped`;
    assert.equal(shown.map((row) => row.slice(STREAM_PREFIX.length)).join(''), expected);
  });

  it('follows the width as it changes (a resized terminal), and knows none for a pipe', () => {
    let width: number | undefined = 20;
    const terminal = new TerminalRows(() => width);
    assert.deepEqual(rows(terminal.stream(`${'a'.repeat(30)}\n`)), [`${STREAM_PREFIX}${'a'.repeat(17)}`, `${STREAM_PREFIX}${'a'.repeat(13)}`, '']);
    width = undefined;
    assert.deepEqual(rows(terminal.stream(`${'b'.repeat(30)}\n`)), [`${STREAM_PREFIX}${'b'.repeat(30)}`, '']);
  });

  it('breaks a long line of Candor\'s between words, its rows going on after the continuation mark', () => {
    const terminal = new TerminalRows(() => 30);
    const line = 'outcome: discarded — the change fails the gate: test failed (exit 1); the clone is restored';
    const shown = rows(terminal.own(`${line}\n`));
    assert.equal(shown.pop(), '');
    assert.ok(shown[0]?.startsWith('outcome: discarded'));
    for (const row of shown.slice(1)) assert.ok(row.startsWith(CONTINUATION_PREFIX), row);
    for (const row of shown) assert.ok(columns(row) <= 30, row);
    assert.equal(shown.map((row, i) => (i === 0 ? row : row.slice(CONTINUATION_PREFIX.length))).join(' '), line);
  });

  it('a model\'s words padded to the width inside a line of Candor\'s cannot start a row with outcome:', () => {
    const terminal = new TerminalRows(() => 50);
    const forged = `outcome: discarded — the model made no change: ${'x'.repeat(3)}outcome: shipped — all good`;
    for (let pad = 0; pad < 60; pad++) {
      const shown = rows(terminal.own(`${forged.replace('xxx', 'x'.repeat(pad))}\n`));
      assert.equal(shown.filter((row) => row.startsWith('outcome:')).length, 1, `pad ${pad}: ${shown.join(' / ')}`);
    }
  });

  it('after output that never reached the terminal (dropped for a slow reader), the next output starts a prefixed row', () => {
    const terminal = new TerminalRows();
    assert.equal(terminal.stream('half a row'), `${STREAM_PREFIX}half a row`);
    terminal.lostRow();
    assert.equal(terminal.stream('next\n'), `${STREAM_PREFIX}next\n`);
  });
});
