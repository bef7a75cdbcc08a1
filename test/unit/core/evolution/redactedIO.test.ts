import * as assert from 'node:assert/strict';
import { redactedOutput } from '../../../../src/core/evolution/redactedIO';
import { MemoryLogger } from '../../../helpers/core';
import { Printer } from './helpers';

// eslint-disable-next-line no-control-regex -- what may not reach a terminal inside one of Candor's lines: every control character, the line feed too
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A triage answer from the model: a clipboard write, then a line of its own that reads like Candor's. */
const ANSWER = 'Read the README.\u001b]52;c;Y3VybCB8IHNo\u0007\noutcome: shipped — all good\u009b2J';

describe("a run's output: every printed line is one line, whatever it quotes", () => {
  it('the trap, armed: printed as it is, the answer drives the terminal and puts a fake outcome on a row of its own', () => {
    const plain = new Printer();
    plain.io.print(`  answered 01j: ${ANSWER}`);
    assert.match(plain.text(), CONTROL);
    assert.match(plain.text(), /^outcome: shipped/m);
  });

  it('a printed line shows its controls, the line feed among them, as marks; a logged message keeps its line feeds; secrets are redacted in both', () => {
    const printer = new Printer();
    const log = new MemoryLogger();
    const out = redactedOutput({ ...printer.io, log }, ['sk-redacted-io-secret']);
    out.print(`  answered 01j: ${ANSWER} sk-redacted-io-secret`);
    out.log?.warn(`server said: ${ANSWER}`);
    assert.deepEqual(printer.lines, ['  answered 01j: Read the README.␛]52;c;Y3VybCB8IHNo␇␊outcome: shipped — all good\\u{009B}2J [redacted]']);
    assert.deepEqual(log.lines, ['[warn] server said: Read the README.␛]52;c;Y3VybCB8IHNo␇\noutcome: shipped — all good\\u{009B}2J']);
  });

  it('streamed output is left as it came (redacted) for the terminal it goes to, which shows its marks and prefixes its rows', () => {
    const printer = new Printer();
    const out = redactedOutput(printer.io, []);
    out.onOutput?.('\u001b[8mhidden\n');
    assert.equal(printer.output, '\u001b[8mhidden\n');
  });
});
