import * as assert from 'node:assert/strict';
import { DEFAULT_LOCAL_SERVERS, parseLocalServers } from '../../../../src/core/provider/localServers';
import { baseUrlProblem, parsePortInput, withServerAdded } from '../../../../src/core/provider/pickerInputs';

describe('Select Model: what the user types into "Add a port…" and "Use a base URL…"', () => {
  const listed = DEFAULT_LOCAL_SERVERS;

  it('a port, typed as a number or as a loopback address or URL', () => {
    for (const typed of ['18200', ' 18200 ', ':18200', '127.0.0.1:18200', 'localhost:18200', 'http://127.0.0.1:18200/v1', 'http://[::1]:18200']) {
      assert.deepEqual(parsePortInput(typed, listed), { port: 18200 }, typed);
    }
  });

  it('anything else says what is wrong and what to do instead', () => {
    const problem = (typed: string): string => {
      const result = parsePortInput(typed, listed);
      assert.ok('problem' in result, `${typed} is refused`);
      return result.problem;
    };
    assert.match(problem(''), /Type the port/);
    assert.match(problem('llama'), /"llama" is not a port: type a number from 1 to 65535/);
    assert.match(problem('0'), /ports go from 1 to 65535/);
    assert.match(problem('70000'), /ports go from 1 to 65535/);
    assert.match(problem('192.168.1.20:8080'), /127\.0\.0\.1 only\. For a server on 192\.168\.1\.20, use "Use a base URL…"/);
    assert.match(problem('http://localhost/v1'), /is not a port/, 'a URL without a port names no port');
    assert.match(problem('8080'), /Port 8080 is already in candor\.localServers \(llama\.cpp on 127\.0\.0\.1:8080\); if its models are not listed, nothing answered there/);
    assert.match(problem('x'.repeat(500)), /too long/);
  });

  it('the new entry goes after the user\'s own list, every entry kept as written; with no list, after the defaults it replaces', () => {
    const server = { port: 18200, kind: 'llamacpp' as const, sendKey: false };
    const defaults = ['11434 ollama', '1234 lmstudio', '8080 llamacpp', '8000 vllm'];
    assert.deepEqual(withServerAdded(undefined, defaults, server), [...defaults, '18200 llamacpp']);
    const own = [{ port: 8000, kind: 'vllm', sendKey: true }, 9000, 'not an entry'];
    assert.deepEqual(withServerAdded(own, defaults, server), [...own, '18200 llamacpp'], 'nothing of the user\'s is lost, even what Candor cannot read');
    assert.deepEqual(parseLocalServers(withServerAdded(undefined, defaults, server), true), [...DEFAULT_LOCAL_SERVERS, server], 'the defaults stay probed');
  });

  it('a base URL: http or https, no credentials, no query; the problem otherwise, with the next step', () => {
    for (const ok of ['http://127.0.0.1:8081/v1', 'https://api.example.com/v1', 'http://localhost:1234/v1/']) assert.equal(baseUrlProblem(ok), undefined, ok);
    assert.match(baseUrlProblem('') ?? '', /Type the base URL/);
    assert.match(baseUrlProblem('api.example.com/v1') ?? '', /is not a URL: type it whole, with http:\/\/ or https:\/\//);
    assert.match(baseUrlProblem('localhost:1234/v1') ?? '', /"localhost:1234\/v1" is not a URL: type it whole/, 'not "a scheme localhost:"');
    assert.match(baseUrlProblem('ftp://example.com/v1') ?? '', /http or https, not ftp/);
    assert.match(baseUrlProblem('https://user:sk-secret@example.com/v1') ?? '', /Leave the user and password out.*Set API Key/);
    assert.match(baseUrlProblem('https://example.com/v1?key=1') ?? '', /Leave out the part after \? or #/);
  });
});
