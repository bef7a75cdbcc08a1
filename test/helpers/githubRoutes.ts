// What the fake GitHub answers when no fault is switched on: GitHub's
// behaviour for the endpoints Candor uses, on the fake's state.
import type { Answer } from './githubFaults';
import { branchBody, checkRunBody, combinedStatusBody, errorBody, fullName, fullRepositoryBody, pullBody, validationBody, type FakePull, type FakeRepo } from './githubFixtures';
import type { OperationId } from './githubSchema';
import type { FakeState } from './fakeGitHub';

const NOT_FOUND: Answer = { status: 404, body: errorBody('Not Found', 404) };

export function route(state: FakeState, operation: OperationId, params: Record<string, string>, query: Record<string, string>, body: unknown): Answer {
  const repo = state.repos.get(`${params.owner}/${params.repo}`.toLowerCase());
  if (repo === undefined) return NOT_FOUND;
  switch (operation) {
    case 'repos/get':
      return { status: 200, body: fullRepositoryBody(repo, repo.parent ? state.repos.get(repo.parent.toLowerCase()) : undefined, state.links) };
    case 'repos/get-branch': {
      const sha = repo.branches.get(params.branch ?? '');
      return sha === undefined ? { status: 404, body: errorBody('Branch not found', 404) } : { status: 200, body: branchBody(repo, params.branch ?? '', sha, state.links) };
    }
    case 'pulls/list':
      return { status: 200, body: listPulls(state, repo, query) };
    case 'pulls/create':
      return createPull(state, repo, body as { title: string; head: string; base: string; body?: string; head_repo?: string });
    case 'checks/list-for-ref': {
      const checks = step(state.checks.get(params.ref ?? ''));
      return { status: 200, body: { total_count: checks.length, check_runs: checks.map((check) => checkRunBody(repo, params.ref ?? '', check, state.links)) } };
    }
    case 'repos/get-combined-status-for-ref':
      return { status: 200, body: combinedStatusBody(repo, params.ref ?? '', step(state.statuses.get(params.ref ?? '')), state.links) };
  }
}

/** The current step of a script, moving it on for the next read. */
function step<T>(script: { steps: T[][]; read: number } | undefined): T[] {
  if (script === undefined || script.steps.length === 0) return [];
  const current = script.steps[Math.min(script.read, script.steps.length - 1)] ?? [];
  script.read++;
  return current;
}

function listPulls(state: FakeState, repo: FakeRepo, query: Record<string, string>): unknown[] {
  const wanted = query.state ?? 'open';
  return state.pulls
    .filter((p) => p.repo.toLowerCase() === fullName(repo).toLowerCase())
    .filter((p) => wanted === 'all' || p.state === wanted)
    .filter((p) => query.head === undefined || `${p.headOwner}:${p.branch}`.toLowerCase() === query.head.toLowerCase())
    .filter((p) => query.base === undefined || p.base === query.base)
    .map((p) => pullBody(p, reposOf(state, p, repo), false, state.links));
}

function reposOf(state: FakeState, pull: FakePull, base: FakeRepo): { head: FakeRepo; base: FakeRepo } {
  return { head: state.repos.get(pull.headRepo.toLowerCase()) ?? base, base };
}

/**
 * GitHub's rules for a new pull request: the head branch must exist in the
 * head repository (this one, or a fork of it named by `owner:`), the base in
 * this one, and no open pull request may have the same head and base.
 */
function createPull(state: FakeState, target: FakeRepo, input: { title: string; head: string; base: string; body?: string; head_repo?: string }): Answer {
  const [headOwner, branch] = input.head.includes(':') ? (input.head.split(':', 2) as [string, string]) : [target.owner, input.head];
  const headRepo = findHeadRepo(state, target, headOwner, input.head_repo);
  const sha = headRepo?.branches.get(branch);
  if (headRepo === undefined || sha === undefined) return { status: 422, body: validationBody([{ field: 'head', code: 'invalid' }]) };
  if (!target.branches.has(input.base)) return { status: 422, body: validationBody([{ field: 'base', code: 'invalid' }]) };
  const open = state.pulls.find((p) => p.state === 'open' && p.repo.toLowerCase() === fullName(target).toLowerCase() && p.headOwner.toLowerCase() === headOwner.toLowerCase() && p.branch === branch && p.base === input.base);
  if (open) return { status: 422, body: validationBody([{ code: 'custom', message: `A pull request already exists for ${headOwner}:${branch}.` }]) };
  const pull: FakePull = { number: state.pulls.length + 1, repo: fullName(target), headOwner, headRepo: fullName(headRepo), branch, sha, base: input.base, title: input.title, body: input.body ?? '', state: 'open' };
  state.pulls.push(pull);
  const created = pullBody(pull, { head: headRepo, base: target }, true, state.links);
  return { status: 201, headers: { location: String(created.url) }, body: created };
}

function findHeadRepo(state: FakeState, target: FakeRepo, headOwner: string, headRepo: string | undefined): FakeRepo | undefined {
  if (headRepo !== undefined) return state.repos.get(headRepo.toLowerCase());
  if (headOwner.toLowerCase() === target.owner.toLowerCase()) return target;
  return [...state.repos.values()].find((r) => r.owner.toLowerCase() === headOwner.toLowerCase() && r.parent?.toLowerCase() === fullName(target).toLowerCase());
}
