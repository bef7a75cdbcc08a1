import * as assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { renderResult } from '../../../../src/core/mcp/results';
import { SecretSet } from '../../../../src/core/redact';

const none = new SecretSet();
const text = (value: string): CallToolResult['content'][number] => ({ type: 'text', text: value });

// What the model gets of a tool's result: the text, binary content named,
// everything cut to the bound and redacted.
describe('MCP client results', () => {
  it('joins text parts with a newline and counts their bytes', () => {
    const result = renderResult({ content: [text('first'), text('zweite Zeile, größer')] }, none);
    assert.deepEqual(result, { isError: false, text: 'first\nzweite Zeile, größer', bytes: 5 + Buffer.byteLength('zweite Zeile, größer') });
  });

  it('keeps isError', () => {
    assert.equal(renderResult({ content: [text('no such file')], isError: true }, none).isError, true);
  });

  it('names audio and embedded resources with their decoded size, and a link with its uri', () => {
    const audio = Buffer.alloc(3000).toString('base64');
    const blob = Buffer.alloc(2 * 1024 * 1024).toString('base64');
    const result = renderResult(
      {
        content: [
          { type: 'audio', data: audio, mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: 'x'.repeat(100) } },
          { type: 'resource', resource: { uri: 'file:///disk.img', blob } },
          { type: 'resource_link', uri: 'https://example.com/report.pdf', name: 'report', mimeType: 'application/pdf', size: 12_600 },
        ],
      },
      none,
    );
    assert.equal(result.text, ['[audio audio/wav, 2.9 KB]', '[resource file:///notes.md, text/markdown, 100 B]', '[resource file:///disk.img, 2.0 MB]', '[resource link https://example.com/report.pdf (report), application/pdf, 12.3 KB]'].join('\n'));
    assert.equal(result.bytes, 3000 + 100 + 2 * 1024 * 1024);
  });

  it('names a content type it does not know instead of dropping or showing it', () => {
    // Tried: a content part of a type newer than this code, as a server might send.
    const result = renderResult({ content: [{ type: 'hologram', data: 'zzz' } as unknown as CallToolResult['content'][number]] }, none);
    assert.equal(result.text, '[hologram content, not shown]');
  });

  it('shows structured content as JSON when there is no content', () => {
    assert.equal(renderResult({ content: [], structuredContent: { temperature: 21 } }, none).text, '{"temperature":21}');
  });

  it('cuts at the bound with a marker saying how much was cut, and not one byte sooner', () => {
    const exact = renderResult({ content: [text('a'.repeat(1000))] }, none, 1000);
    assert.equal(exact.text, 'a'.repeat(1000));
    const over = renderResult({ content: [text('a'.repeat(5000))] }, none, 1000);
    assert.equal(over.text, `${'a'.repeat(1000)}\n[truncated: showed 1,000 of 5,000 bytes]`);
  });

  it('never splits a UTF-8 character at the cut', () => {
    const result = renderResult({ content: [text('é'.repeat(5000))] }, none, 1001);
    assert.ok(!result.text.includes('\uFFFD'));
    assert.ok(result.text.startsWith('é'.repeat(500) + '\n[truncated: showed 1,000 of 10,000 bytes]'));
  });

  it('leaves no piece of a secret that straddles the cut', () => {
    // Tried: a known secret, and a Bearer token, each starting a few bytes before the bound.
    const secret = 'straddling-secret-value-0123456789';
    for (const [planted, secrets] of [
      [secret, new SecretSet([secret])],
      ['Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789', none],
    ] as const) {
      const body = `${'a'.repeat(995)}${planted}${'b'.repeat(200_000)}`;
      const result = renderResult({ content: [text(body)] }, secrets, 1000);
      assert.ok(!/abcdefgh|straddling-se/.test(result.text), result.text.slice(980, 1060));
      assert.match(result.text, /\[truncated: showed [\d,]+ of 201,\d{3} bytes\]$/);
    }
  });

  it('redacts a secret anywhere in a short result', () => {
    const secret = 'plain-secret-0123456789';
    assert.equal(renderResult({ content: [text(`key=${secret};`)] }, new SecretSet([secret])).text, 'key=[redacted];');
  });
});
