import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { environmentSecrets, isUsableSecret, looksLikeCredentialName, redact, REDACTED, SecretSet, urlPasswords } from '../../../src/core/redact';

// Values shaped like the real thing and random each run: no pattern (sk-…, Bearer) would catch them.
const hex = (n: number): string => randomBytes(n).toString('hex');
const AWS_SECRET = `wJalr${hex(12)}/K7MDENG`;
const GITHUB = `ghp_${hex(18)}`;
const NPM = `npm_${hex(18)}`;
const DB_PASSWORD = `Db${hex(6)}`;
const STORED_KEY = `stored-${hex(10)}`;
const PEM_BODY = [hex(32), hex(32)];

function hostEnv(): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/bin:/bin',
    HOME: '/root',
    AWS_SECRET_ACCESS_KEY: AWS_SECRET,
    GITHUB_TOKEN: GITHUB,
    npm_token: NPM,
    DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.internal:5432/app`,
    SSH_PRIVATE_KEY: ['-----BEGIN OPENSSH PRIVATE KEY-----', ...PEM_BODY, '-----END OPENSSH PRIVATE KEY-----'].join('\n'),
    // Credential-looking names whose values would blank out ordinary text if they were patterns.
    SHORT_TOKEN: 'abc1234',
    PORT_SECRET: '1234567890',
    TOKENIZERS_PARALLELISM: 'false',
    FEATURE_PASSWORD_RESET: 'TRUE',
    GOOGLE_APPLICATION_CREDENTIALS: '/home/user/.config/gcloud/application_default_credentials.json',
    WIN_CREDENTIAL_FILE: 'C:\\Users\\u\\credentials.json',
    FOO: '1',
  };
}

describe('redaction: the environment\'s credentials join the set', () => {
  it('the trap: output echoing the host\'s tokens passes the old set (the one key) untouched', () => {
    const env = hostEnv();
    const line = `aws ${AWS_SECRET} gh ${GITHUB} npm ${NPM} db ${DB_PASSWORD}`;
    assert.equal(new SecretSet([env.OPENAI_API_KEY]).redact(line), line);
  });

  it('every credential-looking variable is redacted wherever its value appears, and named as its source', () => {
    const secrets = environmentSecrets(hostEnv());
    const line = `aws ${AWS_SECRET} gh ${GITHUB} npm ${NPM} db ${DB_PASSWORD} pem ${PEM_BODY[1]}`;
    assert.equal(secrets.redact(line), `aws ${REDACTED} gh ${REDACTED} npm ${REDACTED} db ${REDACTED} pem ${REDACTED}`);
    const source = new Map(secrets.entries().map((e) => [e.value, e.source]));
    assert.equal(source.get(AWS_SECRET), 'AWS_SECRET_ACCESS_KEY');
    assert.equal(source.get(GITHUB), 'GITHUB_TOKEN');
    assert.equal(source.get(NPM), 'npm_token', 'names match in any case');
    assert.equal(source.get(DB_PASSWORD), 'the password in DATABASE_URL', 'DATABASE_URL is no credential name, but its password is found');
    assert.equal(source.get(PEM_BODY[0] ?? ''), 'SSH_PRIVATE_KEY', 'a multi-line key joins line by line (redaction works per line)');
  });

  it('short values, plain numbers, true/false and absolute paths are never patterns', () => {
    const secrets = environmentSecrets(hostEnv());
    const values = secrets.values();
    for (const unused of ['abc1234', '1234567890', 'false', 'TRUE', '/home/user/.config/gcloud/application_default_credentials.json', 'C:\\Users\\u\\credentials.json', '1', '/root']) {
      assert.ok(!values.includes(unused), unused);
    }
    const prose = 'Set TOKENIZERS_PARALLELISM=false, port 1234567890, read /home/user/.config/gcloud/application_default_credentials.json; code abc1234; TRUE.';
    assert.equal(secrets.redact(prose), prose);
    for (const value of ['12345678', '-3.14159265', '1,000,000', 'false', 'True', '/usr/local/bin/node', 'D:/keys/key.pem', '\\\\server\\share\\x']) {
      assert.equal(isUsableSecret(value), false, value);
    }
    assert.equal(isUsableSecret('hunter22'), true);
  });

  it('which names look like a credential', () => {
    for (const name of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'PGPASSWORD', 'MYSQL_PASSWD', 'AZURE_CREDENTIALS', 'STRIPE_API_KEY_LIVE', 'OPENAI_KEY', 'deploy_private_key_b64', 'x_api_key']) {
      assert.ok(looksLikeCredentialName(name), name);
    }
    for (const name of ['PATH', 'HOME', 'DATABASE_URL', 'KEYBOARD', 'AWS_ACCESS_KEY_ID', 'SSH_AUTH_SOCK', 'MONKEY']) {
      assert.ok(!looksLikeCredentialName(name), name);
    }
  });

  it('the key handed over as a string joins as "the API key", unless the environment already named it', () => {
    const env = { ...hostEnv(), OPENAI_API_KEY: `env-${hex(10)}` };
    const secrets = environmentSecrets(env, [STORED_KEY, env.OPENAI_API_KEY]);
    const source = new Map(secrets.entries().map((e) => [e.value, e.source]));
    assert.equal(source.get(STORED_KEY), 'the API key');
    assert.equal(source.get(env.OPENAI_API_KEY), 'OPENAI_API_KEY');
  });

  it('a value added twice keeps its first source; a plain SecretSet says where nobody named it', () => {
    const set = new SecretSet([STORED_KEY]);
    set.add(STORED_KEY, 'GITHUB_TOKEN');
    assert.deepEqual(set.entries(), [{ value: STORED_KEY, source: 'a secret Candor was given' }]);
  });
});

describe('redaction: the password of any URL, by pattern', () => {
  it('user:password@ is redacted in any scheme, whoever\'s it is, however short', () => {
    assert.equal(redact('connecting to postgres://app:hunter2@db/app'), `connecting to postgres://app:${REDACTED}@db/app`);
    assert.equal(redact('HTTPS_PROXY=http://me:p4ss@proxy.corp:3128'), `HTTPS_PROXY=http://me:${REDACTED}@proxy.corp:3128`);
    assert.equal(redact('redis://:just-a-password@cache:6379/0'), `redis://:${REDACTED}@cache:6379/0`);
    assert.equal(redact('{"url":"amqp://guest:guest@rabbit/"}'), `{"url":"amqp://guest:${REDACTED}@rabbit/"}`);
    assert.equal(redact('git clone https://x-access-token:p@rt@github.com/o/r'), `git clone https://x-access-token:${REDACTED}@github.com/o/r`, 'an @ inside the password goes too');
  });

  it('URLs without a password, and ordinary colons and at-signs, are left alone', () => {
    for (const text of ['https://user@example.com/x', 'http://localhost:8080/path?q=a:b@c', 'git@github.com:org/repo.git', 'mail me at a@b.c: 10:30', 'http://[::1]:3000/']) {
      assert.equal(redact(text), text);
    }
  });

  it('urlPasswords finds each, as written and percent-decoded', () => {
    assert.deepEqual(urlPasswords('a https://u:p%40ss%2Fw0rd@h/ b ftp://x:plain-pw@h2'), ['p%40ss%2Fw0rd', 'p@ss/w0rd', 'plain-pw']);
    const secrets = environmentSecrets({ DATABASE_URL: 'mysql://root:p%40ss%2Fw0rd@db/x' });
    assert.equal(secrets.redact('the password is p@ss/w0rd'), `the password is ${REDACTED}`);
  });
});
