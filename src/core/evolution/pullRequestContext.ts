import type { GuardOptions, UnsavedBufferSource } from '../git';
import type { SecretSet } from '../redact';

/**
 * What Open Pull Request is given, by the extension's command and by
 * `candor pr` alike (docs/architecture.md, "Evolution"): where the data and
 * the agent repository are, which remote and API, and where the token
 * comes from. Nothing here is read from a workspace.
 */
export interface PullRequestContext {
  readonly dataDir: string;
  /** The agent repository (candor.evolution.repository). */
  readonly repository: string;
  /** candor.evolution.remote / --remote, default 'origin'. */
  readonly remote: string;
  /** candor.github.apiUrl / --github-api; else derived (github.com only). */
  readonly apiUrl?: string;
  /** candor.github.baseRepository, "owner/repo". */
  readonly baseRepository?: string;
  /** The caller's token source: VS Code's session or SecretStorage, or GITHUB_TOKEN for the CLI. */
  readonly token: (apiUrl: string, host: string) => Promise<string | undefined>;
  /** For the hand-off's clean check. */
  readonly unsaved: UnsavedBufferSource;
  /** Redaction: the token is added to it as soon as it is read. */
  readonly secrets: SecretSet;
  /** Told before each rate-limit wait, so the wait can be shown. */
  readonly onWait?: (ms: number, why: string) => void;
  readonly guardOptions?: GuardOptions;
  /**
   * What fixes a missing or refused token, in the caller's words. Default:
   * the command "Candor: Set GitHub Token" (and GITHUB_TOKEN for the CLI).
   */
  readonly authFix?: string;
}

/** What the user sees before anything is pushed. Every text in it is redacted. */
export interface PullRequestPreview {
  readonly run: string;
  readonly branch: string;
  /** The commit that will be pushed: the evolution branch's, or the agent repository's branch with the user's commits on it. */
  readonly commit: string;
  /** Redacted (no user:password). */
  readonly remoteUrl: string;
  /** Config names that send the push elsewhere than `remoteUrl` (`remote.<name>.pushurl`, `url.*.pushinsteadof`): the preview says so. */
  readonly pushRedirects: readonly string[];
  /** The repository the branch is pushed to. */
  readonly repository: { readonly owner: string; readonly repo: string; readonly public: boolean; readonly fork: boolean };
  /** Where the pull request goes (the parent for a fork, or candor.github.baseRepository). */
  readonly target: { readonly owner: string; readonly repo: string };
  readonly base: string;
  readonly commitMessage: string;
  readonly title: string;
  readonly body: string;
  /**
   * `needed`: the branch is only in the scratch clone, and is handed to the
   * agent repository first (as Take Evolution Branch does); `taken`: it is
   * there as shipped; `taken-with-user-commits`: the user added commits to
   * it, and it is pushed as it is.
   */
  readonly handOff: 'needed' | 'taken' | 'taken-with-user-commits';
  /** A pull request already open for the branch: it is linked, never a second one made. */
  readonly existing?: { readonly url: string; readonly number: number };
}

export interface PushAndOpenResult {
  readonly url: string;
  readonly number: number;
  /** It was open already. */
  readonly existed: boolean;
  /** `user-branch`: the agent repository's branch, with the user's commits on it, was pushed as it is. */
  readonly pushed: 'hand-off-branch' | 'user-branch';
}
