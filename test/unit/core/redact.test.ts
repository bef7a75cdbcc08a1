import * as assert from 'node:assert/strict';

import { environmentSecrets, MATCH_REACH, MIN_SECRET_LENGTH, redact, redactingLogger, REDACTED, SecretSet } from '../../../src/core/redact';
import { MemoryLogger } from '../../helpers/core';

// Keys that match no pattern (not `sk-…`, no `Bearer`): only knowing the value removes them.
const STORED_KEY = 'candor-stored-key-7f3a9c2e1b';
const ENV_KEY = 'env-key-1d2c3b4a5f6e';

describe('redact: the one redaction pass', () => {
  describe('the key from SecretStorage and from the environment', () => {
    it('a key read from SecretStorage is removed once the set knows it, and not before', () => {
      const secrets = new SecretSet();
      const line = `request failed: the provider said key ${STORED_KEY} is wrong`;
      assert.equal(secrets.redact(line), line, 'the trap: an unknown key with no pattern passes through');
      secrets.add(STORED_KEY);
      assert.equal(secrets.redact(line), `request failed: the provider said key ${REDACTED} is wrong`);
      assert.deepEqual(secrets.values(), [STORED_KEY]);
    });

    it('the environment key is known from the start', () => {
      const line = `echo: ${ENV_KEY}`;
      assert.equal(environmentSecrets({}).redact(line), line, 'the trap: without OPENAI_API_KEY nothing is known');
      assert.equal(environmentSecrets({ OPENAI_API_KEY: ENV_KEY }).redact(line), `echo: ${REDACTED}`);
    });

    it('both keys at once, each wherever it appears, as often as it appears', () => {
      const secrets = environmentSecrets({ OPENAI_API_KEY: ENV_KEY });
      secrets.add(STORED_KEY);
      const out = secrets.redact(`${STORED_KEY}/${ENV_KEY}/${STORED_KEY}${STORED_KEY}`);
      assert.equal(out, [REDACTED, REDACTED, `${REDACTED}${REDACTED}`].join('/'));
    });

    it('a key is trimmed when added, so a pasted key with a newline still matches', () => {
      const secrets = new SecretSet([`  ${STORED_KEY}\n`]);
      assert.equal(secrets.redact(`x ${STORED_KEY} y`), `x ${REDACTED} y`);
    });

    it('a key escaped inside JSON or percent-encoded in a URL is removed too', () => {
      const odd = 'key"with\\quote/and space';
      const secrets = new SecretSet([odd]);
      const json = JSON.stringify({ echoed: odd });
      assert.ok(!json.includes(odd), 'the trap: JSON escapes the key, so the raw value is not in the text');
      assert.equal(JSON.parse(secrets.redact(json)).echoed, REDACTED);
      assert.equal(secrets.redact(`https://h/?k=${encodeURIComponent(odd)}`), `https://h/?k=${REDACTED}`);
    });
  });

  describe('Authorization values, whoever\'s key it is', () => {
    it('header form: Authorization: Bearer …', () => {
      assert.equal(redact('Authorization: Bearer abc.DEF_123-xyz~+/='), `Authorization: Bearer ${REDACTED}`);
      assert.equal(redact('authorization:bearer   tok3n'), `authorization:bearer   ${REDACTED}`);
    });

    it('JSON form: "authorization":"Bearer …" stays valid JSON without the value', () => {
      const body = JSON.stringify({ error: { message: 'bad key' }, headers: { authorization: 'Bearer some-opaque-token-42' } });
      const out = redact(body);
      assert.ok(!out.includes('some-opaque-token-42'));
      assert.equal(JSON.parse(out).headers.authorization, `Bearer ${REDACTED}`);
      assert.equal(JSON.parse(redact('{"Authorization" : "Bearer t0k"}')).Authorization, `Bearer ${REDACTED}`);
    });

    it('other schemes keep no credential: Basic, Token, and a bare value', () => {
      assert.equal(redact('Authorization: Basic dXNlcjpwYXNz'), `Authorization: ${REDACTED}`);
      assert.equal(redact('authorization=Token abcdef'), `authorization=${REDACTED}`);
      assert.equal(redact('"authorization":"rawvalue123"'), `"authorization":"${REDACTED}"`);
    });

    it('api key fields and OpenAI-style keys nobody declared', () => {
      assert.equal(redact('x-api-key: k1k2k3'), `x-api-key: ${REDACTED}`);
      assert.equal(redact('{"api_key":"k1k2k3"}'), `{"api_key":"${REDACTED}"}`);
      assert.equal(redact('OPENAI_API_KEY=whatever123'), `OPENAI_API_KEY=${REDACTED}`);
      assert.equal(redact('the key sk-proj-AbCdEfGhIjKlMnOpQrSt was refused'), `the key ${REDACTED} was refused`);
    });

    it('a match never runs past the end of its line', () => {
      assert.equal(redact('Authorization:\nnext line stays'), 'Authorization:\nnext line stays');
      assert.equal(redact('Bearer\nnext'), 'Bearer\nnext');
    });

    it(`the longest match that spans a blank starts less than MATCH_REACH (${MATCH_REACH}) characters before it`, () => {
      const blanks = ' '.repeat(16);
      const head = `proxy-authorization"${blanks}:${blanks}"Basic${blanks}`;
      assert.ok(head.length < MATCH_REACH, `${head.length}`);
      assert.equal(redact(`${head}dXNlcjpwYXNz`), `proxy-authorization"${blanks}:${blanks}"${REDACTED}`);
      assert.equal(redact(`Bearer${blanks}tok3n`), `Bearer${blanks}${REDACTED}`);
    });

    it('ordinary prose is left alone', () => {
      const prose = 'The provider refused authorization. Run "Candor: Set API Key" and try again; ask the server admin.';
      assert.equal(redact(prose), prose);
    });
  });

  describe('short keys are never patterns', () => {
    it(`a key shorter than ${MIN_SECRET_LENGTH} characters is ignored by the set and by redact`, () => {
      const short = 'a'.repeat(MIN_SECRET_LENGTH - 1);
      const secrets = new SecretSet([short, 'abc', '']);
      assert.deepEqual(secrets.values(), []);
      const text = `banana ${short} abc`;
      assert.equal(secrets.redact(text), text);
      assert.equal(redact(text, [short, 'abc']), text);
      assert.equal(environmentSecrets({ OPENAI_API_KEY: 'x' }).values().length, 0);
    });

    it(`a key of exactly ${MIN_SECRET_LENGTH} characters is used`, () => {
      const eight = 'q'.repeat(MIN_SECRET_LENGTH);
      assert.equal(new SecretSet([eight]).redact(`<${eight}>`), `<${REDACTED}>`);
      assert.equal(redact(`<${eight}>`, [eight]), `<${REDACTED}>`);
    });
  });

  describe('keys that contain or overlap each other', () => {
    it('a key containing another is removed whole, in either order of adding', () => {
      const inner = 'inner-key-12345';
      const outer = `prefix-${inner}-suffix`;
      for (const order of [[inner, outer], [outer, inner]]) {
        const out = new SecretSet(order).redact(`a ${outer} b ${inner} c`);
        assert.equal(out, `a ${REDACTED} b ${REDACTED} c`, `order ${order.join(', ')}`);
      }
    });

    it('two keys that overlap in the text leave no piece of either', () => {
      const one = 'AAAA-BBBB-CCCC';
      const two = 'CCCC-DDDD-EEEE';
      const out = redact(`x AAAA-BBBB-CCCC-DDDD-EEEE y`, [one, two]);
      assert.equal(out, `x ${REDACTED} y`);
      for (const piece of ['AAAA', 'BBBB', 'DDDD', 'EEEE']) assert.ok(!out.includes(piece), piece);
    });
  });

  describe('redactDeep', () => {
    it('redacts every string of a nested record and keeps everything else', () => {
      const secrets = new SecretSet([STORED_KEY]);
      const message = {
        type: 'init',
        busy: false,
        count: 3,
        nothing: null,
        absent: undefined,
        entries: [
          { id: 'e1', kind: 'user', text: `my key is ${STORED_KEY}` },
          { id: 'e2', kind: 'notice', text: 'Authorization: Bearer leaked-token', nested: { deeper: [[`${STORED_KEY}`]] } },
        ],
      };
      const before = JSON.stringify(message);
      const out = secrets.redactDeep(message);
      assert.equal(JSON.stringify(message), before, 'the original is not changed');
      assert.ok(!JSON.stringify(out).includes(STORED_KEY));
      assert.ok(!JSON.stringify(out).includes('leaked-token'));
      assert.equal(out.entries[0]?.text, `my key is ${REDACTED}`);
      assert.deepEqual(out.entries[1]?.nested, { deeper: [[REDACTED]] });
      assert.equal(out.count, 3);
      assert.equal(out.busy, false);
      assert.equal(out.nothing, null);
      assert.ok('absent' in out);
    });
  });

  describe('redactingLogger', () => {
    it('every level is redacted before the sink sees it', () => {
      const sink = new MemoryLogger();
      const secrets = new SecretSet();
      const log = redactingLogger(sink, secrets);
      secrets.add(STORED_KEY); // a key learned after the logger was made is still caught
      log.trace(`t ${STORED_KEY}`);
      log.info(`i ${STORED_KEY}`);
      log.warn('w Authorization: Bearer abcdefgh');
      log.error(`e ${STORED_KEY}`);
      assert.equal(sink.lines.length, 4);
      assert.ok(sink.lines.every((l) => !l.includes(STORED_KEY) && !l.includes('abcdefgh')), sink.lines.join('\n'));
    });

    it('no byte of a server, a model or a gate drives the log: ESC, BEL, C1 and DEL are shown as marks, line feeds kept', () => {
      const attack = 'MCP server said: \u001b]52;c;Y3VybCB8IHNo\u0007\u001b[1A\u001b[2K\u009b2J\u007f\r\nnext line';
      // The trap, armed: a plain sink takes the bytes as they are.
      const plain = new MemoryLogger();
      plain.warn(attack);
      // eslint-disable-next-line no-control-regex -- the bytes a log must not get
      const driving = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
      assert.match(plain.lines.join('\n'), driving);
      const sink = new MemoryLogger();
      redactingLogger(sink, new SecretSet()).warn(attack);
      assert.doesNotMatch(sink.lines.join('\n'), driving);
      assert.ok(sink.lines.join('\n').includes('␛]52;c;Y3VybCB8IHNo␇␛[1A␛[2K\\u{009B}2J␡\nnext line'), sink.lines.join('\n'));
    });
  });
});
