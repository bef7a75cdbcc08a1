import { isHandoffBranchName } from '../git';
import { environmentSecrets, type SecretSet } from '../redact';
import type { Rant } from '../rants';
import type { RantClass } from './classify';
import { CANDOR_IDENTITY } from '../identity';
import { scratchGit, type Scratch, type ScratchGitOptions } from './scratchGit';
import { clip } from '../text';
import { visibleText } from '../../shared/visibleText';

export const RANT_TRAILER = 'Candor-Rant';

/** Every commit Candor makes: its own identity, unsigned (no agent, no prompt). */
const COMMIT_CONFIG = [...CANDOR_IDENTITY, 'commit.gpgsign=false'].flatMap((pair) => ['-c', pair]);

export function rantBranch(rantId: string): string {
  return evolutionBranch(`rant-${rantId}`);
}

export function revertBranch(shortSha: string): string {
  return evolutionBranch(`revert-${shortSha}`);
}

/** A branch is named only if the hand-off will take it later (the guard's one rule, isHandoffBranchName). */
function evolutionBranch(suffix: string): string {
  const name = `candor/${suffix}`;
  if (!isHandoffBranchName(name)) throw new Error(`${JSON.stringify(name)} cannot name an evolution branch: only a-z, 0-9 and "-" may follow "candor/"`);
  return name;
}

export interface ShipInput {
  readonly base: string;
  /** The staged tree of the change (see measureChange). */
  readonly tree: string;
  readonly rant: Rant;
  readonly class: RantClass | null;
  /** The model's description of its change. */
  readonly summary: string;
}

export interface Shipped {
  readonly branch: string;
  readonly commit: string;
}

export interface ShipOptions extends ScratchGitOptions {
  /**
   * The redaction set of the run: everything that becomes part of a commit
   * (the rant, the summary, the trailers) passes through it before it is
   * written (docs/architecture.md, "Secrets"). Default: the environment's
   * secrets (environmentSecrets) and `secrets`.
   */
  readonly redaction?: SecretSet;
}

/** How a commit's words are redacted: the run's set, else the environment's with the keys handed over. */
function redactor(options: ShipOptions): (text: string) => string {
  const set = options.redaction ?? environmentSecrets(process.env, options.secrets ?? []);
  return (text) => set.redact(text);
}

/** Words Candor did not write, as a commit holds them: control characters shown as marks (docs/architecture.md, "Text bound for a person"). */
function shown(text: string): string {
  return visibleText(text, { keepLayout: true });
}

/**
 * The message of a change's commit. Each part is redacted before it is
 * clipped (a clip could cut a key in half, and half a key matches nothing),
 * and the whole once more at the end. The rant and the model's summary are
 * shown with their control characters as marks, and bounded.
 */
export function commitMessage(input: Omit<ShipInput, 'base' | 'tree'>, redact: (text: string) => string = (text) => text): string {
  const text = shown(redact(input.rant.text.trim()));
  const firstLine = text.split('\n', 1)[0]?.trim() ?? '';
  const subject = clip(`candor: ${firstLine}`, 72);
  const quoted = clip(text, 2000)
    .split('\n')
    .map((line) => `> ${line}`.trimEnd())
    .join('\n');
  const parts = [subject, `Addresses the rant of ${input.rant.ts}${input.class !== null ? ` (${input.class})` : ''}:\n${quoted}`];
  const summary = quoteMarkers(shown(redact(input.summary.trim())));
  if (summary !== '') parts.push(clip(summary, 4000));
  parts.push(`${RANT_TRAILER}: ${input.rant.id}`);
  return redact(`${parts.join('\n\n')}\n`);
}

/**
 * Commits exactly the measured tree on top of `base` and points
 * `candor/rant-<id>` at it. The work tree is not consulted again, so nothing
 * the gate left behind can slip into the commit.
 */
export async function shipChange(scratch: Scratch, input: ShipInput, options: ShipOptions = {}): Promise<Shipped> {
  const branch = rantBranch(input.rant.id);
  const commit = (await scratchGit(scratch, [...COMMIT_CONFIG, 'commit-tree', input.tree, '-p', input.base, '-F', '-'], { ...options, input: commitMessage(input, redactor(options)) })).trim();
  await scratchGit(scratch, ['branch', '--force', '--no-track', branch, commit], options);
  return { branch, commit };
}

/**
 * Commits exactly `tree` on top of `parent` as Candor and points `branch` at
 * it: how a prepared revert ships (see rollback.ts). Nothing of the work
 * tree is read; the message is redacted first, its control characters shown
 * as marks (it quotes subjects of commits Candor did not write).
 */
export async function commitOnBranch(scratch: Scratch, input: { readonly branch: string; readonly tree: string; readonly parent: string; readonly message: string }, options: ShipOptions = {}): Promise<Shipped> {
  const commit = (await scratchGit(scratch, [...COMMIT_CONFIG, 'commit-tree', input.tree, '-p', input.parent, '-F', '-'], { ...options, input: shown(redactor(options)(input.message)) })).trim();
  await scratchGit(scratch, ['branch', '--force', '--no-track', input.branch, commit], options);
  return { branch: input.branch, commit };
}

/** `git revert --no-edit <commit>` as Candor at the clone's HEAD (detached); throws `scratch-git` on a conflict. */
export async function revertCommit(scratch: Scratch, commit: string, options: ScratchGitOptions = {}): Promise<void> {
  await scratchGit(scratch, [...COMMIT_CONFIG, 'revert', '--no-edit', commit], options);
}

/**
 * The model's summary is its own words: a line of it that reads like a
 * Candor trailer or a revert note ("This reverts commit …") is quoted, so
 * that the rollback, which trusts those lines, reads only what Candor wrote
 * (a change cannot declare an earlier Candor commit reverted).
 */
function quoteMarkers(text: string): string {
  return text
    .split('\n')
    .map((line) => (/^\s*(candor-[a-z-]+\s*:|this reverts commit)/i.test(line) ? `> ${line}` : line))
    .join('\n');
}
