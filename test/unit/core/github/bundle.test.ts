import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import type { createGitHub as CreateGitHub } from '../../../../src/core/github/client';
import { TOKEN, useFakeGitHub } from './setup';

const CLIENT = path.join(__dirname, '../../../../src/core/github/client.ts');

describe('The GitHub client in the CommonJS host bundle', () => {
  const gh = useFakeGitHub();
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-gh-bundle-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('bundles @octokit/rest (ESM only) into CommonJS that works, with no require of it left', async () => {
    const outfile = path.join(dir, 'client.js');
    // The host bundle's options (scripts/build.mjs).
    await esbuild.build({ entryPoints: [CLIENT], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'error' });
    const code = fs.readFileSync(outfile, 'utf8');
    assert.doesNotMatch(code, /require\(["']@octokit/, 'octokit is inside the bundle, not loaded from node_modules');
    assert.match(code, /octokit-rest\.js/, 'the bundle holds Octokit (its user agent names it)');
    const bundled = createRequire(__filename)(outfile) as { createGitHub: typeof CreateGitHub };
    gh.fake.addRepo({ owner: 'alice', name: 'agent', defaultBranch: 'trunk' });
    const repository = await bundled.createGitHub({ apiUrl: gh.fake.apiUrl, token: TOKEN, userAgent: 'candor-test' }).repository('alice', 'agent');
    assert.equal(repository.defaultBranch, 'trunk');
  });
});
