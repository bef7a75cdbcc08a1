/** Parsers for the fixed formats the guard asks git for. */

export interface CommitSummary {
  readonly hash: string;
  readonly shortHash: string;
  readonly author: string;
  readonly email: string;
  /** Author date, strict ISO 8601. */
  readonly date: string;
  readonly subject: string;
}

export interface Trailer {
  readonly key: string;
  readonly value: string;
}

/** `log -z --format=%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%s` */
export function parseLog(output: string): CommitSummary[] {
  return output
    .split('\0')
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record !== '')
    .map((record) => {
      const [hash = '', shortHash = '', author = '', email = '', date = '', subject = ''] = record.split('\x1f');
      return { hash, shortHash, author, email, date, subject };
    });
}

/** `--format=%(trailers:only,unfold)`: one `Key: value` per line. */
export function parseTrailers(output: string): Trailer[] {
  const trailers: Trailer[] = [];
  for (const line of output.split('\n')) {
    const match = /^([A-Za-z0-9][A-Za-z0-9-]*)\s*:\s?(.*)$/.exec(line.trim());
    if (match) trailers.push({ key: match[1] ?? '', value: (match[2] ?? '').trim() });
  }
  return trailers;
}

