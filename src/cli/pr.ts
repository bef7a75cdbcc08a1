import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { followRecordedCi, isPullRequestRefusal, previewPullRequest, pushAndOpen, type PullRequestContext, type PullRequestPreview } from '../core/evolution';
import { isKindError } from '../core/kindError';
import { environmentSecrets } from '../core/redact';
import { isDataDirError } from '../core/settings/dataDirRules';
import { manifestDefaults } from '../core/manifest';
import { resolveCandorSettings } from '../core/settings/resolve';
import { isParseArgsError, requireDataDir } from './evolve';
import { cliPullRequestContext, describeCi } from './github';
import { UsageError } from './model';
import type { CliStream } from './output';

export const PR_USAGE = `  candor pr BRANCH --repository AGENT_REPO --data-dir DIR [--remote NAME] [--github-api URL] [--yes] [--wait]
                (the token comes from GITHUB_TOKEN; prints the preview and pushes only with --yes)`;

/** The CI timeout when following with --wait: candor.evolution.ciTimeoutMinutes's default. */
const CI_TIMEOUT_MINUTES = resolveCandorSettings({ inspect: manifestDefaults, trusted: true, confirmedUrls: [] }).pullRequests.ciTimeoutMinutes;

/**
 * `candor pr BRANCH`: Open Pull Request from the command line. Prints the
 * preview; only with --yes hands the branch off (if needed), pushes it and
 * opens the pull request; --wait then follows its CI to the end. Exit 0
 * when the pull request is open (opened now or already), whatever its CI
 * says (the verdict is printed and recorded); 1 when refused or failed,
 * without --yes too (nothing was pushed); 2 for bad usage.
 */
export async function pr(args: string[], out: CliStream): Promise<number> {
  const secrets = environmentSecrets();
  let ctx: PullRequestContext;
  let options: { branch: string; yes: boolean; wait: boolean };
  try {
    ({ ctx, options } = parsePrArgs(args, secrets, out));
  } catch (err) {
    if (isKindError(err, UsageError) || isParseArgsError(err)) {
      console.error(`pr: ${err.message}\nusage:\n${PR_USAGE}`);
      return 2;
    }
    if (isDataDirError(err)) {
      console.error(`pr: ${err.message}`);
      return 1;
    }
    throw err;
  }
  try {
    const preview = await previewPullRequest(ctx, options.branch);
    for (const line of previewLines(preview, ctx.remote)) out.line(line);
    if (!options.yes) {
      console.error(`nothing pushed: run again with --yes to push ${preview.branch} to ${ctx.remote} and ${preview.existing ? 'update the open pull request' : 'open the pull request'}`);
      return 1;
    }
    const opened = await pushAndOpen(ctx, preview);
    out.line(`pushed ${preview.branch} to ${ctx.remote}${opened.pushed === 'user-branch' ? ": the agent repository's branch as it is, with the commits you added" : ''}`);
    out.line(opened.existed ? `a pull request was already open for ${preview.branch}: #${opened.number}` : `opened pull request #${opened.number}`);
    out.line('CI: pending (recorded in evolution.jsonl)');
    if (options.wait) await follow(ctx, preview.run, out);
    out.line(`pull request: ${opened.url}`);
    return 0;
  } catch (err) {
    if (isPullRequestRefusal(err)) {
      console.error(`pr: ${secrets.redact(err.message)}`);
      return 1;
    }
    throw err;
  }
}

function parsePrArgs(args: string[], secrets: ReturnType<typeof environmentSecrets>, out: CliStream): { ctx: PullRequestContext; options: { branch: string; yes: boolean; wait: boolean } } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      repository: { type: 'string' },
      'data-dir': { type: 'string' },
      remote: { type: 'string' },
      'github-api': { type: 'string' },
      yes: { type: 'boolean' },
      wait: { type: 'boolean' },
    },
  });
  const [branch, ...more] = positionals;
  if (branch === undefined) throw new UsageError('name the branch to open a pull request for, e.g. candor/rant-<id>');
  if (more.length > 0) throw new UsageError(`one branch at a time (got ${positionals.length})`);
  if (values.repository === undefined) throw new UsageError("--repository is required: the agent's repository the branch is pushed from");
  const repository = path.resolve(values.repository);
  const dataDir = requireDataDir(values['data-dir'], repository);
  const ctx = cliPullRequestContext({ dataDir, repository, remote: values.remote ?? 'origin', ...(values['github-api'] !== undefined ? { apiUrl: values['github-api'] } : {}), secrets, out });
  return { ctx, options: { branch, yes: values.yes === true, wait: values.wait === true } };
}

/** --wait: CI followed until it completes or times out; Ctrl+C stops following (the pull request stays open). */
async function follow(ctx: PullRequestContext, run: string, out: CliStream): Promise<void> {
  const controller = new AbortController();
  const onSigint = (): void => {
    out.line('\nstopped following CI (the pull request stays open; "candor evolve" reads its CI later)');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  try {
    out.line(`following CI (at most ${CI_TIMEOUT_MINUTES} minutes from the push)…`);
    const ci = await followRecordedCi(ctx, run, { timeoutMs: CI_TIMEOUT_MINUTES * 60_000, signal: controller.signal, onState: (state) => out.line(`CI: ${describeCi(state)}`) });
    out.line(`CI ${ci.state === 'pending' ? 'not followed to the end' : 'done'}: ${describeCi(ci)}`);
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/** The preview, as the user reads it before saying --yes. */
export function previewLines(preview: PullRequestPreview, remote: string): string[] {
  const { repository, target } = preview;
  const visibility = repository.public ? 'PUBLIC: anyone can read what is pushed, and a push cannot be taken back' : 'private';
  const handOff = {
    needed: 'only in the scratch clone: it is handed to the agent repository first (as "candor take" does; the repository must be clean)',
    taken: 'in the agent repository, as shipped',
    'taken-with-user-commits': "in the agent repository, with commits you added: it is pushed as it is, your commits included",
  }[preview.handOff];
  const lines = [
    `pull request for ${preview.branch} (run ${preview.run})`,
    `  remote:       ${remote} ${preview.remoteUrl}`,
    ...(preview.pushRedirects.length > 0 ? [`  pushed to:    elsewhere: the repository's ${preview.pushRedirects.join(', ')} sends the push to another URL`] : []),
    `  repository:   ${repository.owner}/${repository.repo} (${visibility})${repository.fork ? ', a fork' : ''}`,
    `  branch:       ${preview.branch} at ${preview.commit.slice(0, 12)}, ${handOff}`,
    `  into:         ${target.owner}/${target.repo}, base ${preview.base}`,
  ];
  if (preview.existing) lines.push(`  already open: #${preview.existing.number} ${preview.existing.url} (no second one is opened)`);
  lines.push('commit message:', ...indent(preview.commitMessage), `title: ${preview.title}`, 'body:', ...indent(preview.body));
  return lines;
}

function indent(text: string): string[] {
  return text.split('\n').map((line) => `  | ${line}`.trimEnd());
}
