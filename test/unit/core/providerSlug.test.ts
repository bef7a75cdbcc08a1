import assert from 'node:assert/strict';
import { normalizeSlug, providerSlug } from '../../../src/core/providerSlug';

describe('gate/slug', () => {
  it('follows the design examples', () => {
    assert.equal(providerSlug('https://api.openai.com/v1'), 'api-openai-com');
    assert.equal(providerSlug('http://127.0.0.1:11434/v1'), '127-0-0-1-11434');
  });

  it('names the embedded provider "offline" for an empty base URL', () => {
    assert.equal(providerSlug(''), 'offline');
    assert.equal(providerSlug('   '), 'offline');
  });

  it('lowercases the host', () => {
    assert.equal(providerSlug('HTTPS://API.OpenAI.com/v1'), 'api-openai-com');
  });

  it('drops the scheme\'s default port, so writing it out is not a switch; keeps any other', () => {
    assert.equal(providerSlug('https://api.openai.com:443/v1'), providerSlug('https://api.openai.com/v1'));
    assert.equal(providerSlug('http://localhost:80/v1'), 'localhost');
    assert.equal(providerSlug('HTTP://localhost:80/v1'), 'localhost');
    assert.equal(providerSlug('http://localhost:443/v1'), 'localhost-443', '443 is not http\'s default');
    assert.equal(providerSlug('https://localhost:80/v1'), 'localhost-80', '80 is not https\'s default');
  });

  it('reads a slug stored with a default port as the slug in use, and leaves a host that merely ends in 80 alone', () => {
    assert.equal(normalizeSlug('api-openai-com-443', 'api-openai-com'), 'api-openai-com');
    assert.equal(normalizeSlug('localhost-80', 'localhost'), 'localhost');
    assert.equal(normalizeSlug('10-0-0-80', '10-0-0-80'), '10-0-0-80');
    assert.equal(normalizeSlug('10-0-0-80', 'other'), '10-0-0-80');
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
