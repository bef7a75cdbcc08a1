import { StringDecoder } from 'node:string_decoder';
import { secretForms, type SecretSet } from '../redact';
import { scratchGitBytes, type Scratch, type ScratchGitOptions } from './scratchGit';

/**
 * A change that carries a secret never ships (docs/architecture.md,
 * "Secrets"): redaction keeps a key out of what Candor writes, but a commit
 * is the model's text, and a masked value in code would be a broken change.
 * So the change is discarded instead, and the reason names where the secret
 * came from, never the secret.
 */

/** The reason of a discarded change, naming the source (`GITHUB_TOKEN`, "the API key"), never the value. */
export function secretReason(source: string): string {
  return `the change contains a secret (from ${source})`;
}

/**
 * Finds the values of a SecretSet (raw, JSON-escaped or percent-encoded) in
 * text that arrives in chunks, in constant memory: only the last characters
 * that could start a match are kept between chunks.
 */
export class SecretScanner {
  readonly #needles: ReadonlyArray<{ readonly form: string; readonly source: string }>;
  readonly #keep: number;
  readonly #decoder = new StringDecoder('utf8');
  #held = '';
  #found: string | undefined;

  constructor(secrets: SecretSet) {
    this.#needles = secrets.entries().flatMap(({ value, source }) => secretForms(value).map((form) => ({ form, source })));
    this.#keep = Math.max(0, ...this.#needles.map((n) => n.form.length - 1));
  }

  /** The source of the first secret found so far, if any. */
  get found(): string | undefined {
    return this.#found;
  }

  /** Scans one more chunk; returns the source once a secret is found (and from then on ignores the rest). */
  push(chunk: string | Buffer): string | undefined {
    if (this.#found !== undefined || this.#needles.length === 0) return this.#found;
    this.#scan(this.#held + (typeof chunk === 'string' ? chunk : this.#decoder.write(chunk)));
    return this.#found;
  }

  /** Scans what is left; returns the source of the first secret found, if any. */
  end(): string | undefined {
    if (this.#found === undefined && this.#needles.length > 0) this.#scan(this.#held + this.#decoder.end());
    this.#held = '';
    return this.#found;
  }

  #scan(window: string): void {
    let first = Infinity;
    for (const needle of this.#needles) {
      const at = window.indexOf(needle.form);
      if (at !== -1 && at < first) {
        first = at;
        this.#found = needle.source;
      }
    }
    this.#held = this.#keep > 0 ? window.slice(-this.#keep) : '';
  }
}

/** The source of the first secret of `secrets` in `text`, or undefined. */
export function findSecret(text: string | Buffer, secrets: SecretSet): string | undefined {
  const scanner = new SecretScanner(secrets);
  scanner.push(text);
  return scanner.end();
}

/**
 * What a diff adds: its `+` lines (the new side's file names among them),
 * without the `-` lines and the context. A secret already in the base, or
 * one the change removes, is not the change's to carry.
 */
export function addedLines(diff: string): string {
  return diff
    .split('\n')
    .filter((line) => line.startsWith('+'))
    .join('\n');
}

/**
 * The source of the first secret that the tree `tree` adds to `base`, or
 * undefined. Binary files are read as text (`--text`), so a key inside one
 * is found too. Call it once the change's size is within its limits: the
 * diff is read whole.
 */
export async function changeSecret(scratch: Scratch, base: string, tree: string, secrets: SecretSet, options: ScratchGitOptions = {}): Promise<string | undefined> {
  if (secrets.values().length === 0) return undefined;
  const diff = await scratchGitBytes(scratch, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--text', '--unified=0', base, tree, '--'], options);
  return findSecret(addedLines(diff.toString('utf8')), secrets);
}
