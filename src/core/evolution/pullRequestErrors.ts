import { isKindError, KindError } from '../kindError';
import { GitGuardError } from '../git/errors';
import { GitHubError } from '../github/errors';
import { EvolutionError } from './errors';

/**
 * Why Open Pull Request stopped before GitHub or git said anything
 * (docs/architecture.md, "Evolution"). Each message names the fix. What
 * GitHub refuses is a GitHubError (a missing or refused token, a missing
 * scope, a remote that is not GitHub), what git or the guard refuses a
 * GitGuardError (a dirty repository, a rejected push), both passed on as
 * they are.
 */
export type PullRequestErrorKind =
  /** No shipped or revert-prepared run in evolution.jsonl has the branch. */
  | 'no-run'
  /** The agent repository has no remote of that name. */
  | 'no-remote'
  /** The branch moved between the preview and the push: what was shown is not what would be pushed. */
  | 'changed'
  /** The run has no pull request recorded: there is no CI to follow. */
  | 'no-pull-request';

export class PullRequestError extends KindError<PullRequestErrorKind> {
  override readonly name = 'PullRequestError';
}

/**
 * An error Open Pull Request refuses or fails with, whose message is meant
 * for the user as it is (the CLI exits 1 with it, the extension shows it);
 * anything else is a bug.
 */
export function isPullRequestRefusal(err: unknown): err is KindError {
  return isKindError(err, PullRequestError) || isKindError(err, GitHubError) || isKindError(err, GitGuardError) || isKindError(err, EvolutionError);
}
