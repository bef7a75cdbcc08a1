import * as assert from 'node:assert/strict';
import { ViewRedaction, type StreamMessage } from '../../../../src/core/chat/viewRedaction';
import { type HostMessage } from '../../../../src/protocol/chat';
import { redact, REDACTED, SecretSet } from '../../../../src/core/redact';
import { isReplaceTextMessage } from '../../../helpers/core';

const KEY = 'candor-stored-key-7f3a9c2e1b88';
const ID = 'reply-1';

/** What the webview does with the messages: deltas append, replaceText starts over. */
class FakeView {
  text = '';
  readonly posted: Array<HostMessage | StreamMessage> = [];
  /** The entry's text after every message, as a user would have seen it. */
  readonly seen: string[] = [];

  apply(messages: Array<HostMessage | StreamMessage>): void {
    for (const m of messages) {
      this.posted.push(m);
      if (m.type === 'entry' && m.entry.id === ID) this.text = 'text' in m.entry ? m.entry.text : '';
      if (m.type === 'delta' && m.id === ID) this.text += m.text;
      if (isReplaceTextMessage(m) && m.id === ID) this.text = m.text;
      this.seen.push(this.text);
    }
  }
}

/** A reply streamed delta by delta, then replaced by its record's entry (the whole reply, as the model sent it). */
function stream(redaction: ViewRedaction, view: FakeView, deltas: readonly string[]): void {
  view.apply(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: '', streaming: true } }));
  for (const text of deltas) view.apply(redaction.messages<HostMessage>({ type: 'delta', id: ID, text }));
  view.apply(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: deltas.join('') } }));
}

describe('ViewRedaction: what the chat view is sent', () => {
  it('the trap: redacting each delta on its own lets a key split across two deltas through', () => {
    const secrets = new SecretSet([KEY]);
    const deltas = [`your key is ${KEY.slice(0, 12)}`, `${KEY.slice(12)} — keep it safe`];
    const perDelta = deltas.map((d) => secrets.redact(d)).join('');
    assert.ok(perDelta.includes(KEY), 'per-delta redaction shows the whole key once the view joins the pieces');
  });

  it('a key split across two deltas never reaches the view, at any split point', () => {
    const full = `your key is ${KEY} — keep it safe`;
    const start = full.indexOf(KEY);
    for (let cut = start; cut <= start + KEY.length; cut++) {
      const secrets = new SecretSet([KEY]);
      const view = new FakeView();
      stream(new ViewRedaction(secrets), view, [full.slice(0, cut), full.slice(cut)]);
      assert.equal(view.text, redact(full, [KEY]), `cut at ${cut}`);
      assert.ok(view.seen.every((t) => !t.includes(KEY.slice(0, 8))), `cut at ${cut}: a piece of the key was shown: ${view.seen.join(' | ')}`);
      assert.ok(view.posted.every((m) => !JSON.stringify(m).includes(KEY.slice(0, 8))), `cut at ${cut}: a posted message holds a piece of the key`);
    }
  });

  it('one character per delta: the key, a Bearer token and an sk- key, across lines', () => {
    const full = `line one ${KEY}\nAuthorization: Bearer abc.def-ghi_jkl\nand sk-proj-AbCdEfGhIjKlMnOpQrStUv, done.`;
    const view = new FakeView();
    stream(new ViewRedaction(new SecretSet([KEY])), view, [...full]);
    assert.equal(view.text, redact(full, [KEY]));
    for (const secret of [KEY.slice(0, 8), 'abc.def', 'sk-proj-AbCd']) {
      assert.ok(view.seen.every((t) => !t.includes(secret)), `${secret} was shown at some point`);
    }
    // Each word is held until it ends, so the view is sent the reply word by word.
    const deltas = view.posted.filter((m) => m.type === 'delta').length;
    assert.ok(deltas >= 7, `the reply still streams in pieces (${deltas} deltas)`);
  });

  it('a line far longer than the part kept open: finished in pieces, never cut inside a match', () => {
    // Single spaces everywhere, with a credential after many of them: a careless cut would split "Bearer" from its token.
    const parts: string[] = [];
    for (let i = 0; parts.join('').length < 12_000; i++) parts.push(i % 7 === 3 ? `key ${KEY} ` : `lorem Bearer tok${i}en api_key: v${i} ipsum `);
    const full = parts.join('');
    for (const size of [5, 7, 64]) {
      const view = new FakeView();
      const deltas: string[] = [];
      for (let i = 0; i < full.length; i += size) deltas.push(full.slice(i, i + size));
      stream(new ViewRedaction(new SecretSet([KEY])), view, deltas);
      assert.equal(view.text, redact(full, [KEY]), `deltas of ${size}`);
      assert.ok(view.seen.every((t) => !t.includes(KEY.slice(0, 8)) && !/tok\d+en|: v\d/.test(t)), `deltas of ${size}: a credential was shown`);
    }
  });

  it('when redaction changes text already shown, the entry\'s text is replaced, never left with the key', () => {
    const secrets = new SecretSet();
    const redaction = new ViewRedaction(secrets);
    const view = new FakeView();
    view.apply(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: '', streaming: true } }));
    view.apply(redaction.messages<HostMessage>({ type: 'delta', id: ID, text: `token ${KEY} and ` }));
    assert.ok(view.text.includes(KEY), 'the trap: a key nobody knew yet is shown');
    secrets.add(KEY); // learned mid-stream, as when the key is read from secret storage
    view.apply(redaction.messages<HostMessage>({ type: 'delta', id: ID, text: 'more' }));
    const replace = view.posted.find(isReplaceTextMessage);
    assert.ok(replace, 'a replaceText message was posted');
    assert.ok(!view.text.includes(KEY));
    view.apply(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: `token ${KEY} and more` } }));
    assert.equal(view.text, `token ${REDACTED} and more`);
  });

  it('a streamed reply that becomes an incomplete one is redacted whole and ends the stream', () => {
    const secrets = new SecretSet([KEY]);
    const redaction = new ViewRedaction(secrets);
    const view = new FakeView();
    view.apply(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: '', streaming: true } }));
    view.apply(redaction.messages<HostMessage>({ type: 'delta', id: ID, text: 'half a ' }));
    view.apply(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'partial', text: `half a ${KEY}` } }));
    assert.equal(view.text, `half a ${REDACTED}`);
    // A late delta of the ended stream has no entry to go to, and is not sent.
    assert.deepEqual(redaction.messages<HostMessage>({ type: 'delta', id: ID, text: KEY.slice(0, 10) }), []);
  });

  it('a full refresh ends the streams: their later deltas are not sent, one piece at a time', () => {
    const redaction = new ViewRedaction(new SecretSet([KEY]));
    redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: '', streaming: true } });
    redaction.messages<HostMessage>({ type: 'init', session: 's', more: false, entries: [], busy: true, provider: { label: '', name: 'm', host: '', title: '', model: 'm', provider: 'p', offline: true }, trusted: true, welcome: false, sessionTitle: '' });
    assert.deepEqual(redaction.messages<HostMessage>({ type: 'delta', id: ID, text: `${KEY.slice(0, 10)} ` }), []);
    assert.deepEqual(redaction.messages<HostMessage>({ type: 'entry', entry: { id: ID, kind: 'assistant', text: `a ${KEY}` } }), [{ type: 'entry', entry: { id: ID, kind: 'assistant', text: `a ${REDACTED}` } }]);
  });

  it('every other message is redacted in every string it holds', () => {
    const redaction = new ViewRedaction(new SecretSet([KEY]));
    const messages: HostMessage[] = [
      { type: 'init', session: 's', more: false, entries: [{ id: 'u', kind: 'user', text: `my key ${KEY}` }, { id: 'n', kind: 'notice', level: 'error', text: 'Authorization: Bearer zzz' }], busy: false, provider: { label: KEY, name: 'm', host: 'h', title: KEY, model: 'm', provider: 'p', offline: false }, trusted: true, welcome: false, sessionTitle: `about ${KEY}` },
      { type: 'entry', entry: { id: 't', kind: 'tool-result', name: 'read_file', text: `OPENAI_API_KEY=${KEY}`, bytes: 10 } },
      { type: 'git', git: { available: true, summary: KEY, readOnly: false, reasons: [KEY] } },
      { type: 'rants', rants: [{ id: 'r', ts: 't', text: KEY, status: 'new', class: null, answer: null, duplicateOf: null, branch: null, commit: null }], runs: [] },
    ];
    for (const message of messages) {
      const out = redaction.messages(message);
      assert.equal(out.length, 1);
      assert.equal(out[0]?.type, message.type);
      assert.ok(!JSON.stringify(out).includes(KEY), JSON.stringify(out));
      assert.ok(!JSON.stringify(out).includes('zzz'));
    }
  });
});

describe('protocol: replaceText', () => {
  it('the type guard accepts the message and nothing that only looks like it', () => {
    assert.equal(isReplaceTextMessage({ type: 'replaceText', id: 'a', text: 'b' }), true);
    assert.equal(isReplaceTextMessage({ type: 'replaceText', id: 'a' }), false);
    assert.equal(isReplaceTextMessage({ type: 'replaceText', id: 1, text: 'b' }), false);
    assert.equal(isReplaceTextMessage({ type: 'delta', id: 'a', text: 'b' }), false);
    assert.equal(isReplaceTextMessage(null), false);
  });
});

describe('ViewRedaction: a reply\'s thinking streams as a part of its own', () => {
  it('a key split across two thinking deltas never reaches the view, and the answer\'s stream is not disturbed', () => {
    const full = `the key is ${KEY}, I should not repeat it`;
    const start = full.indexOf(KEY);
    for (let cut = start; cut <= start + KEY.length; cut += 3) {
      const redaction = new ViewRedaction(new SecretSet([KEY]));
      const posted: Array<HostMessage | StreamMessage> = [];
      let thinking = '';
      let answer = '';
      const apply = (m: HostMessage): void => {
        for (const out of redaction.messages<HostMessage>(m)) {
          posted.push(out);
          if (out.type === 'entry') [thinking, answer] = [out.entry.kind === 'assistant' ? out.entry.reasoning ?? '' : '', 'text' in out.entry ? out.entry.text : ''];
          if (out.type === 'delta' && out.part === 'reasoning') thinking += out.text;
          else if (out.type === 'delta') answer += out.text;
          if (isReplaceTextMessage(out) && out.part === 'reasoning') thinking = out.text;
          else if (isReplaceTextMessage(out)) answer = out.text;
          assert.ok(!thinking.includes(KEY.slice(0, 8)), `cut at ${cut}: thinking showed ${thinking}`);
        }
      };
      apply({ type: 'entry', entry: { id: ID, kind: 'assistant', text: '', reasoning: '', streaming: true } });
      apply({ type: 'delta', id: ID, text: full.slice(0, cut), part: 'reasoning' });
      apply({ type: 'delta', id: ID, text: full.slice(cut), part: 'reasoning' });
      apply({ type: 'delta', id: ID, text: 'Done.\n' });
      assert.equal(answer, 'Done.\n', 'the answer streams beside the thinking');
      apply({ type: 'entry', entry: { id: ID, kind: 'assistant', text: 'Done.', reasoning: full } });
      assert.equal(answer, 'Done.');
      assert.ok(posted.every((m) => !JSON.stringify(m).includes(KEY.slice(0, 8))), `cut at ${cut}: a posted message holds a piece of the key`);
      assert.ok(thinking.startsWith('the key is ') && thinking.includes(REDACTED), thinking);
    }
  });
});
