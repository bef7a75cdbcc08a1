import assert from 'node:assert/strict';
import { providerSlug } from '../../../src/core/context/slug';

describe('gate/slug', () => {
  it('follows the design examples', () => {
    assert.equal(providerSlug('https://api.openai.com/v1'), 'api-openai-com');
    assert.equal(providerSlug('http://127.0.0.1:11434/v1'), '127-0-0-1-11434');
  });

  it('names the embedded provider "offline" for an empty base URL', () => {
    assert.equal(providerSlug(''), 'offline');
    assert.equal(providerSlug('   '), 'offline');
  });

  it('lowercases the host and keeps a port written out, even the default one', () => {
    assert.equal(providerSlug('HTTPS://API.OpenAI.com/v1'), 'api-openai-com');
    assert.equal(providerSlug('https://api.openai.com:443/v1'), 'api-openai-com-443');
  });

  it('replaces runs of other characters in an IPv6 host: [::1]:8080 → -1-8080', () => {
    assert.equal(providerSlug('http://[::1]:8080/v1'), '-1-8080');
  });

  it('keeps the literal rule at the edges: a trailing dot gives a trailing dash', () => {
    assert.equal(providerSlug('http://example.com./v1'), 'example-com-');
  });

  it('adds no dash for an empty port', () => {
    assert.equal(providerSlug('http://localhost:/v1'), 'localhost');
  });

  it('ignores user info, path, query and fragment', () => {
    assert.equal(providerSlug('https://user:secret@Gateway.example.org:8443/openai/v1?x=1#y'), 'gateway-example-org-8443');
  });
});
