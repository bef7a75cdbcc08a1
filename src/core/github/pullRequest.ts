import { isKindError } from '../kindError';
import { GitHubError } from './errors';
import type { GitHub, PullRequestInfo, RepositoryRef } from './types';

/** The repository a pull request goes to, and why that one. */
export interface PullRequestTarget extends RepositoryRef {
  readonly private: boolean;
  readonly defaultBranch: string;
  readonly htmlUrl: string;
  /** The repository the branch was pushed to. */
  readonly pushed: RepositoryRef;
  /** `pushed`: the push repository itself; `parent`: it is a fork; `setting`: candor.github.baseRepository. */
  readonly why: 'pushed' | 'parent' | 'setting';
}

const OWNER_REPO = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/;

/**
 * Where the pull request goes: `baseRepository` (`owner/repo`) when set,
 * else the push repository's parent when it is a fork, else the push
 * repository.
 */
export async function resolveTarget(gh: GitHub, input: { readonly owner: string; readonly repo: string; readonly baseRepository?: string }): Promise<PullRequestTarget> {
  const pushed = { owner: input.owner, repo: input.repo };
  const setting = input.baseRepository?.trim();
  if (setting) {
    const match = OWNER_REPO.exec(setting);
    if (!match || match[2] === '.' || match[2] === '..') throw new GitHubError('not-github', `candor.github.baseRepository must be "owner/repo", not ${JSON.stringify(setting.slice(0, 200))}.`);
    const target = await gh.repository(match[1] ?? '', match[2] ?? '');
    return { ...pick(target), pushed, why: 'setting' };
  }
  const repository = await gh.repository(input.owner, input.repo);
  if (repository.fork && repository.parent) return { ...pick(repository.parent), pushed, why: 'parent' };
  return { ...pick(repository), pushed, why: 'pushed' };
}

function pick(r: RepositoryRef & { readonly private: boolean; readonly defaultBranch: string; readonly htmlUrl: string }): Omit<PullRequestTarget, 'pushed' | 'why'> {
  return { owner: r.owner, repo: r.repo, private: r.private, defaultBranch: r.defaultBranch, htmlUrl: r.htmlUrl };
}

export interface PullRequestInput {
  /** The repository the branch is pushed to (the remote's). */
  readonly owner: string;
  readonly repo: string;
  readonly branch: string;
  /** The branch the run started from; the target's default branch when it does not exist there. */
  readonly base?: string;
  /** candor.github.baseRepository: `owner/repo`. */
  readonly baseRepository?: string;
  readonly title: string;
  readonly body: string;
}

/** What opening would do, for the preview: nothing is created. */
export interface PullRequestPlan {
  readonly target: PullRequestTarget;
  /** `branch`, or `owner:branch` from a fork. */
  readonly head: string;
  readonly base: string;
  /** Why that base, for people. */
  readonly baseNote: string;
  /** The open pull request of the branch, when there is one: it is linked, never a second made. */
  readonly existing?: PullRequestInfo;
}

export async function planPullRequest(gh: GitHub, input: PullRequestInput): Promise<PullRequestPlan> {
  const target = await resolveTarget(gh, input);
  const crossRepository = target.owner !== input.owner || target.repo !== input.repo;
  const head = crossRepository ? `${input.owner}:${input.branch}` : input.branch;
  const existing = await findExisting(gh, target, input);
  const { base, baseNote } = await chooseBase(gh, target, input.base);
  return { target, head, base, baseNote, ...(existing ? { existing } : {}) };
}

/** `wanted` when the target has that branch, else its default branch. */
export async function chooseBase(gh: GitHub, target: PullRequestTarget, wanted: string | undefined): Promise<{ readonly base: string; readonly baseNote: string }> {
  const name = `${target.owner}/${target.repo}`;
  if (wanted === undefined || wanted === '' || wanted === target.defaultBranch) return { base: target.defaultBranch, baseNote: `the default branch of ${name}` };
  if (await gh.branchExists(target.owner, target.repo, wanted)) return { base: wanted, baseNote: `the branch the run started from, on ${name}` };
  return { base: target.defaultBranch, baseNote: `the default branch of ${name}: the run started from ${wanted}, which ${name} does not have` };
}

async function findExisting(gh: GitHub, target: PullRequestTarget, input: PullRequestInput): Promise<PullRequestInfo | undefined> {
  const open = await gh.openPullRequests(target.owner, target.repo, `${input.owner}:${input.branch}`);
  return open[0];
}

export interface OpenedPullRequest {
  readonly url: string;
  readonly number: number;
  /** It was open already: linked, not created. */
  readonly existed: boolean;
  readonly base: string;
  /** `owner/repo` of the pull request. */
  readonly repository: string;
}

/**
 * Opens the pull request of a pushed branch, or links the one already open
 * for it: it looks first, and a 422 "already exists" (another one opened
 * it meanwhile) is looked up the same way. Never a second one.
 */
export async function openPullRequest(gh: GitHub, input: PullRequestInput): Promise<OpenedPullRequest> {
  const plan = await planPullRequest(gh, input);
  const { target } = plan;
  const repository = `${target.owner}/${target.repo}`;
  const opened = (pr: PullRequestInfo, existed: boolean): OpenedPullRequest => ({ url: pr.url, number: pr.number, existed, base: pr.base, repository });
  if (plan.existing) return opened(plan.existing, true);
  const sameOwnerFork = target.owner === input.owner && target.repo !== input.repo;
  try {
    const created = await gh.createPullRequest(target.owner, target.repo, {
      title: input.title,
      head: plan.head,
      base: plan.base,
      body: input.body,
      ...(sameOwnerFork ? { headRepo: `${input.owner}/${input.repo}` } : {}),
    });
    return opened(created, false);
  } catch (err) {
    if (!isKindError(err, GitHubError, 'exists')) throw err;
    const existing = await findExisting(gh, target, input);
    if (existing) return opened(existing, true);
    throw err;
  }
}
