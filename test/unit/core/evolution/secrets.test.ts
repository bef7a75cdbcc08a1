import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { prepareScratch } from '../../../../src/core/evolution/scratch';
import { scratchGit, type Scratch } from '../../../../src/core/evolution/scratchGit';
import { changeSecret, findSecret, secretReason, SecretScanner } from '../../../../src/core/evolution/secretScan';
import { commitMessage, commitOnBranch, shipChange } from '../../../../src/core/evolution/ship';
import { environmentSecrets, REDACTED, SecretSet } from '../../../../src/core/redact';
import { git, rant, removeTempDirs, tempDir, workspaceRepo, write } from './helpers';

const hex = (n: number): string => randomBytes(n).toString('hex');

describe('secrets never reach a commit', () => {
  // A fake host environment with real-looking values; none matches a pattern (sk-…, Bearer), only the set knows them.
  let githubToken: string;
  let dbPassword: string;
  let storedKey: string;
  let env: NodeJS.ProcessEnv;
  let secrets: SecretSet;
  let dataDir: string;
  let agent: string;
  let scratch: Scratch;
  let head: string;

  beforeEach(async () => {
    githubToken = `ghp_${hex(18)}`;
    dbPassword = `pw-${hex(8)}`;
    storedKey = `stored-${hex(12)}`;
    env = { PATH: '/usr/bin', GITHUB_TOKEN: githubToken, DATABASE_URL: `postgres://app:${dbPassword}@db/app`, SHORT_TOKEN: 'tok123' };
    secrets = environmentSecrets(env, [storedKey]);
    dataDir = tempDir('candor-data-');
    agent = workspaceRepo({ 'fixture.txt': `an old fixture ${githubToken}\n` });
    head = git(agent, 'rev-parse', 'HEAD').trim();
    ({ scratch } = await prepareScratch({ dataDir, repositoryRoot: agent, head, setupCommand: '' }));
  });
  afterEach(() => removeTempDirs());

  /** Stages the clone's work tree as a tree, as the pipeline measures a change. */
  async function stagedTree(): Promise<string> {
    await scratchGit(scratch, ['add', '--all']);
    return (await scratchGit(scratch, ['write-tree'])).trim();
  }

  const messageOf = (commit: string): string => git(scratch.dir, 'log', '-1', '--format=%B', commit);

  describe('the commit message', () => {
    it('a key pasted into a rant, and secrets in the summary, are redacted in the real commit', async () => {
      const pasted = rant(dataDir, `${storedKey} is what I pasted, and the tool crashed\nalso it printed ${githubToken}`, 'proj');
      const summary = `Fixed the crash. Tested against postgres://app:${dbPassword}@db/app and ${storedKey}.`;
      const input = { rant: pasted, class: 'agent-code' as const, summary };
      // The trap: the message as built from the rant and the summary holds every one of them.
      const raw = commitMessage(input);
      for (const secret of [storedKey, githubToken, dbPassword]) assert.ok(raw.includes(secret), secret);

      write(scratch.dir, 'greet.js', "module.exports = () => 'hello there';\n");
      const tree = await stagedTree();
      const shipped = await shipChange(scratch, { ...input, base: head, tree }, { redaction: secrets });
      const message = messageOf(shipped.commit);
      for (const secret of [storedKey, githubToken, dbPassword]) assert.ok(!message.includes(secret), `${secret} in\n${message}`);
      assert.ok(message.startsWith(`candor: ${REDACTED} is what I pasted, and the tool crashed\n`), message);
      assert.ok(message.includes(`postgres://app:${REDACTED}@db/app`), message);
      assert.equal(git(scratch.dir, 'log', '-1', '--format=%(trailers:key=Candor-Rant,valueonly)', shipped.commit).trim(), pasted.id, 'the trailer still names the rant');
      assert.equal(git(scratch.dir, 'show', `${shipped.commit}:greet.js`), "module.exports = () => 'hello there';\n", 'the tree is the change, untouched');
    });

    it('a key cut in half by the subject\'s clip is still redacted (redaction comes before the clip)', () => {
      const longKey = `k-${hex(40)}`;
      const subjectCut = rant(dataDir, `${'x'.repeat(50)} ${longKey}`, 'proj');
      const withSet = new SecretSet([longKey]);
      // The trap: redacting the finished message leaves the start of the key that the subject's clip kept.
      assert.ok(withSet.redact(commitMessage({ rant: subjectCut, class: null, summary: '' })).split('\n')[0]?.includes(longKey.slice(0, 12)));
      const message = commitMessage({ rant: subjectCut, class: null, summary: '' }, (text) => withSet.redact(text));
      assert.ok(!message.includes(longKey.slice(0, 12)), message);
    });

    it('without a set given, the environment\'s secrets and the keys handed over are used', async () => {
      const pasted = rant(dataDir, `my key ${storedKey} failed`, 'proj');
      write(scratch.dir, 'greet.js', "module.exports = () => 'hello you';\n");
      const tree = await stagedTree();
      const shipped = await shipChange(scratch, { base: head, tree, rant: pasted, class: 'agent-code', summary: '' }, { secrets: [storedKey] });
      const message = messageOf(shipped.commit);
      assert.ok(!message.includes(storedKey), message);
      assert.ok(message.includes(`my key ${REDACTED} failed`), message);
    });

    it('a revert\'s message is redacted too (commitOnBranch)', async () => {
      const tree = (await scratchGit(scratch, ['rev-parse', 'HEAD^{tree}'])).trim();
      const shipped = await commitOnBranch(scratch, { branch: 'candor/revert-test', tree, parent: head, message: `Revert "it printed ${githubToken}"\n` }, { redaction: secrets });
      assert.equal(messageOf(shipped.commit).trim(), `Revert "it printed ${REDACTED}"`);
    });
  });

  describe('the change itself', () => {
    it('a change that writes a host token into a file is found, and the reason names the variable', async () => {
      write(scratch.dir, 'config.js', `module.exports = { token: '${githubToken}' };\n`);
      const tree = await stagedTree();
      // The trap: the diff that would ship carries the token.
      assert.ok(git(scratch.dir, 'diff', head, tree).includes(githubToken));
      assert.equal(await changeSecret(scratch, head, tree, new SecretSet()), undefined, 'an empty set finds nothing');

      const source = await changeSecret(scratch, head, tree, secrets);
      assert.equal(source, 'GITHUB_TOKEN');
      assert.equal(secretReason(source), 'the change contains a secret (from GITHUB_TOKEN)');
    });

    it('the stored key, a URL password percent-encoded, and a key inside a binary file are found too', async () => {
      write(scratch.dir, 'a.txt', `key=${storedKey}\n`);
      assert.equal(await changeSecret(scratch, head, await stagedTree(), secrets), 'the API key');
      fs.rmSync(path.join(scratch.dir, 'a.txt'));

      write(scratch.dir, 'db.json', `{"url": "postgres://app:${encodeURIComponent(`${dbPassword}/x`)}@db"}\n`);
      const percent = environmentSecrets({ DATABASE_URL: `postgres://app:${dbPassword}%2Fx@db/app` });
      assert.equal(await changeSecret(scratch, head, await stagedTree(), percent), 'the password in DATABASE_URL');
      fs.rmSync(path.join(scratch.dir, 'db.json'));

      fs.writeFileSync(path.join(scratch.dir, 'blob.bin'), Buffer.concat([Buffer.from([0, 1, 2, 0xff]), Buffer.from(githubToken), Buffer.from([0])]));
      assert.equal(await changeSecret(scratch, head, await stagedTree(), secrets), 'GITHUB_TOKEN');
    });

    it('a clean change, a short value, and a secret the base already held (the change removes it) are not the change\'s', async () => {
      write(scratch.dir, 'greet.js', "module.exports = () => 'hello tok123';\n");
      assert.equal(await changeSecret(scratch, head, await stagedTree(), secrets), undefined, 'SHORT_TOKEN=tok123 is no pattern');
      fs.rmSync(path.join(scratch.dir, 'fixture.txt'));
      assert.equal(await changeSecret(scratch, head, await stagedTree(), secrets), undefined);
    });
  });
});

describe('SecretScanner: in chunks, in constant memory', () => {
  const key = `scan-${hex(12)}`;
  const set = new SecretSet([key], 'GITHUB_TOKEN');

  it('a secret split across chunks, inside a multi-byte text split mid-character, is found', () => {
    const text = Buffer.from(`é${'a'.repeat(100)} ${key} ü`);
    const cut = text.indexOf(key) + 5;
    const scanner = new SecretScanner(set);
    assert.equal(scanner.push(text.subarray(0, 1)), undefined, 'half of é');
    assert.equal(scanner.push(text.subarray(1, cut)), undefined);
    assert.equal(scanner.push(text.subarray(cut)), 'GITHUB_TOKEN');
    assert.equal(scanner.end(), 'GITHUB_TOKEN');
  });

  it('the JSON-escaped form of a value with a quote is found; nothing in clean text', () => {
    const quoted = new SecretSet(['pass"word\\1234'], 'DB_PASSWORD');
    assert.equal(findSecret(JSON.stringify({ p: 'pass"word\\1234' }), quoted), 'DB_PASSWORD');
    assert.equal(findSecret('nothing to see here', set), undefined);
    assert.equal(findSecret('x'.repeat(1_000_000), set), undefined);
  });
});
