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


/** One commit of a history read: its parents (first parent first) and its whole message. */
export interface HistoryEntry {
  readonly sha: string;
  readonly parents: readonly string[];
  readonly message: string;
}

/** `log -z --format=%H%x1f%P%x1f%B`: a message may hold anything but NUL, so only the first two separators count. */
export function parseHistory(output: string): HistoryEntry[] {
  const entries: HistoryEntry[] = [];
  for (const record of output.split('\0')) {
    const [sha = '', parents = '', ...message] = record.replace(/^\n/, '').split('\x1f');
    if (!/^[0-9a-f]{40,64}$/.test(sha)) continue;
    entries.push({ sha, parents: parents.split(' ').filter((p) => p !== ''), message: message.join('\x1f') });
  }
  return entries;
}
