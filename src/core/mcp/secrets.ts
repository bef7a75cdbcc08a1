/**
 * Which values of an expanded server are secrets, for the redaction set and
 * for the confirmation dialog's mask: what the caller already knows (password
 * inputs, credential-looking host variables read through `${env:…}`), the
 * value of every variable the definition sets under a credential-looking
 * name, every header that carries a credential, and the passwords a URL
 * holds (its userinfo, its credential-looking query parameters).
 */
import { looksLikeCredentialName, urlPasswords } from '../redact';
import type { ExpandedServer } from './types';

/** Header names whose value is a credential: Authorization, Cookie, anything with token, key, secret, password or auth in it. */
export function isCredentialHeader(name: string): boolean {
  return /authorization|cookie|token|key|secret|passw|auth/i.test(name);
}

/** Query parameter names whose value is a credential (`?access_token=`, `?api_key=`, `?sig=`). */
export function isCredentialParameter(name: string): boolean {
  return /token|key|secret|passw|auth|sig|credential|session/i.test(name) || looksLikeCredentialName(name);
}

export function collectSecrets(server: ExpandedServer, known: readonly string[]): string[] {
  const found = new Set<string>(known);
  if (server.type === 'stdio') {
    for (const name of server.definedEnv ?? Object.keys(server.env)) {
      const value = server.env[name] ?? '';
      if (looksLikeCredentialName(name)) found.add(value);
      for (const password of urlPasswords(value)) found.add(password);
    }
    for (const arg of server.args) for (const password of urlPasswords(arg)) found.add(password);
  } else {
    for (const [name, value] of Object.entries(server.headers)) {
      if (!isCredentialHeader(name)) continue;
      found.add(value);
      // `Bearer abc`: the token alone too, so it is caught wherever it appears without its scheme.
      const token = /^[A-Za-z-]+\s+(\S+)$/.exec(value.trim())?.[1];
      if (token !== undefined) found.add(token);
    }
    for (const secret of urlSecrets(server.url)) found.add(secret);
  }
  return [...found].filter((secret) => secret.trim() !== '');
}

/** The userinfo password and the credential-looking query values of `url`, as written and decoded. */
export function urlSecrets(url: string): string[] {
  const found = new Set<string>(urlPasswords(url));
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [...found];
  }
  if (parsed.password !== '') {
    found.add(parsed.password);
    found.add(safeDecode(parsed.password));
  }
  for (const [name, value] of parsed.searchParams) {
    if (!isCredentialParameter(name) || value === '') continue;
    found.add(value);
    found.add(encodeURIComponent(value));
  }
  return [...found];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
