import { rantStatuses, readRuns } from '../../core/evolution';
import type { HostMessage } from '../../protocol/chat';

/** The chat view's list of rants (each with its class, status and, for a confusion, its answer) and evolution runs, as one message. */
export function rantsMessage(dataDir: string): HostMessage {
  return {
    type: 'rants',
    rants: rantStatuses(dataDir).map((s) => ({
      id: s.rant.id,
      ts: s.rant.ts,
      text: s.rant.text,
      status: s.status,
      class: s.class,
      answer: s.answer,
      duplicateOf: s.duplicateOf,
      branch: s.branch,
      commit: s.commit,
    })),
    runs: readRuns(dataDir).slice(-20).map((r) => ({
      run: r.run,
      ts: r.ts,
      outcome: r.outcome,
      reason: r.reason,
      branch: r.branch,
      diffstat: r.diffstat,
      gateTail: r.gate?.tail ?? null,
      gatePassed: r.gate?.passed ?? null,
      gateFlaky: r.gate?.flaky === true,
      gateCounts: r.gate?.passing !== undefined ? { passing: r.gate.passing, failing: r.gate.failing ?? 0, skipped: r.gate.skipped ?? 0 } : null,
      pullRequest: r.pr && isWebUrl(r.pr.url) ? { url: r.pr.url, number: r.pr.number } : null,
      ci: r.ci ? { state: r.ci.state, url: isWebUrl(r.ci.url) ? r.ci.url : null } : null,
    })),
  };
}

/** Only an https link (or one to this machine, for a local API) goes to the view: the URLs come from GitHub's answers, recorded in evolution.jsonl. */
function isWebUrl(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  try {
    return new URL(url).protocol === 'https:' || /^http:\/\/(127\.0\.0\.1|localhost)(:|\/)/.test(url);
  } catch {
    return false;
  }
}
