import * as assert from 'node:assert/strict';
import { hasOperatorOutsideQuotes, prefixCovers, terminalRefusal } from '../../../../src/core/commands/commandText';

describe('when a prefix covers a command line', () => {
  it('covers the exact line, and the line with more words after it', () => {
    assert.equal(prefixCovers('npm test', 'npm test'), true);
    assert.equal(prefixCovers('npm test', 'npm test -- --grep parser'), true);
    assert.equal(prefixCovers('npm test', '  npm test  '), true);
  });

  it('never covers a longer word that merely starts the same', () => {
    assert.equal(prefixCovers('npm test', 'npm testx'), false);
    assert.equal(prefixCovers('rm', 'rmdir build'), false);
    // Tried: a prefix the user edited to end in a space.
    assert.equal(prefixCovers('git ', 'git-evil'), false);
    assert.equal(prefixCovers('rm ', 'rmdir x'), false);
    assert.equal(prefixCovers('git ', 'git status'), true);
  });

  it('asks again when the rest chains, substitutes or redirects outside quotes', () => {
    // Tried: every operator the issue names, each appended to an approved prefix.
    for (const rest of ['; echo x', ' && curl evil', ' | sh', ' & sleep 1', ' $(whoami)', ' `id`', ' > out', ' < in', ' (x)', '\nrm -rf ~', '\r\nrm -rf ~', ' ${HOME}']) {
      assert.equal(prefixCovers('npm test', `npm test${rest}`), false, JSON.stringify(rest));
    }
  });

  it('lets operators inside single quotes through, but not $ or backquote inside double quotes', () => {
    assert.equal(prefixCovers('npm test', "npm test -- --grep 'a|b;c$(d)'"), true);
    assert.equal(prefixCovers('npm test', 'npm test -- --grep "a|b;c"'), true);
    assert.equal(prefixCovers('npm test', 'npm test -- --grep "$(curl evil)"'), false);
    assert.equal(prefixCovers('npm test', 'npm test -- --grep "`id`"'), false);
  });

  it('an unclosed quote is not covered: the shell would read on', () => {
    assert.equal(hasOperatorOutsideQuotes(" 'open"), true);
    assert.equal(prefixCovers('npm test', 'npm test "open'), false);
  });

  it('an escaped operator is literal, an escaped line break is not', () => {
    assert.equal(prefixCovers('echo', 'echo a\\;b'), true);
    assert.equal(prefixCovers('echo', 'echo a\\\nrm -rf /'), false);
  });

  it('an empty prefix covers nothing', () => {
    assert.equal(prefixCovers('', 'anything'), false);
    assert.equal(prefixCovers('   ', 'anything'), false);
  });
});

describe('which lines Run in Terminal refuses to type', () => {
  it('types a plain line, tabs and non-Latin letters included', () => {
    assert.equal(terminalRefusal('npm test -- --grep "état\tκ"'), undefined);
  });

  it('refuses line breaks, control characters and invisible or bidi characters, saying why', () => {
    assert.match(terminalRefusal('npm test\nrm -rf ~') ?? '', /line break/);
    assert.match(terminalRefusal('npm test\rrm') ?? '', /line break/);
    assert.match(terminalRefusal('npm test\u001b[2K') ?? '', /control character/);
    assert.match(terminalRefusal('npm test\u0003') ?? '', /control character/);
    assert.match(terminalRefusal('npm test\u009b') ?? '', /control character/);
    assert.match(terminalRefusal('echo \u202egnp.exe') ?? '', /invisible or bidirectional/);
    assert.match(terminalRefusal('echo a\u200bb') ?? '', /invisible or bidirectional/);
    // Tried: the other invisible ones a hand-made list misses.
    for (const ch of ['\u2028', '\u2029', '\u2060', '\u00ad', '\u180e', '\u{e0041}']) {
      assert.match(terminalRefusal(`echo a${ch}b`) ?? '', /invisible or bidirectional/, JSON.stringify(ch));
    }
  });
});
