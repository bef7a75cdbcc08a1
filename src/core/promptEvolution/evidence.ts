import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSafeId } from '../ids';
import { contentText } from '../messages';
import { environmentSecrets, type SecretSet } from '../redact';
import { rantStatuses } from '../evolution/triage';
import type { SessionRecord } from '../session/records';
import { Session } from '../session/session';
import type { Evidence } from './proposer';
import type { PromptRegistry } from './registry';

/**
 * What the proposer reads: the registry keeps no message text (a trace is
 * numbers and ids), so the words come from the session files the ids point
 * to, and from rants.jsonl: only the rants triage routed to the prompt
 * (latest class `agent-behaviour`, not dismissed), from every project. A
 * rant about the agent's code or the user's own project is no evidence
 * about the prompt (docs/architecture.md, "Evolution"). Reading evidence never fails a run: what cannot be read
 * is left out and counted. The words are redacted (docs/architecture.md,
 * "Secrets"): a session keeps the user's messages as typed, key included,
 * and evidence is sent to the proposer and may be echoed into a candidate.
 */

export interface GatheredEvidence extends Evidence {
  readonly failingTraces: readonly string[];
  readonly downVoted: readonly string[];
  readonly rants: readonly string[];
  /** Signals or sessions that could not be resolved to text. */
  readonly unresolved: number;
}

const PER_KIND = 12;
/** Recent traces whose sessions are searched for failed requests. */
const RECENT_TRACES = 200;

export async function gatherEvidence(dataDir: string, registry: PromptRegistry, secrets: SecretSet = environmentSecrets()): Promise<GatheredEvidence> {
  const sessions = new SessionCache(path.join(dataDir, 'sessions'));
  let unresolved = 0;
  const signals = await registry.signals().catch(() => []);

  // Down-voted replies, newest first; a later thumbs-up on the same reply withdraws the vote.
  const latestVote = new Map<string, 'up' | 'down'>();
  const voteSession = new Map<string, string | undefined>();
  for (const s of signals) {
    if (s.kind === 'rant') continue;
    latestVote.set(s.replyId, s.kind);
    voteSession.set(s.replyId, s.session);
  }
  const downVoted: string[] = [];
  for (const [replyId, vote] of [...latestVote].reverse()) {
    if (vote !== 'down' || downVoted.length >= PER_KIND) continue;
    const text = exchange(sessions.get(voteSession.get(replyId)), replyId);
    if (text) downVoted.push(text);
    else unresolved++;
  }

  // Newest first, like the votes; reversed back to oldest first below.
  const rants = rantStatuses(dataDir)
    .filter((s) => s.class === 'agent-behaviour' && s.status !== 'dismissed')
    .map((s) => s.rant.text)
    .reverse()
    .slice(0, PER_KIND);

  const traces = await registry.traces().catch(() => []);
  const recentSessions = [...new Set(traces.slice(-RECENT_TRACES).map((t) => t.session))].reverse();
  const failingTraces: string[] = [];
  for (const id of recentSessions) {
    if (failingTraces.length >= PER_KIND) break;
    const session = sessions.get(id);
    if (!session) continue;
    failingTraces.push(...failures(session).slice(-(PER_KIND - failingTraces.length)));
  }
  const clean = (texts: string[]): string[] => texts.map((t) => secrets.redact(t));
  return { failingTraces: clean(failingTraces), downVoted: clean(downVoted.reverse()), rants: clean(rants.reverse()), unresolved };
}

class SessionCache {
  private readonly cache = new Map<string, Session | undefined>();
  constructor(private readonly dir: string) {}

  get(id: string | undefined): Session | undefined {
    if (id === undefined || !isSafeId(id)) return undefined;
    if (!this.cache.has(id)) {
      const file = path.join(this.dir, `${id}.jsonl`);
      let session: Session | undefined;
      try {
        session = fs.existsSync(file) ? Session.open(file) : undefined;
      } catch {
        session = undefined;
      }
      this.cache.set(id, session);
    }
    return this.cache.get(id);
  }
}

/** "User: … / Reply: …" for the reply with this record id. */
function exchange(session: Session | undefined, replyId: string): string | undefined {
  if (!session) return undefined;
  const records = session.all();
  const reply = records.find((r) => (r.type === 'message' || r.type === 'partial') && r.id === replyId);
  if (!reply || (reply.type !== 'message' && reply.type !== 'partial')) return undefined;
  const replyText = reply.type === 'message' ? contentText(reply.message) : reply.text;
  return `User: ${userMessageOf(records, reply.turn) ?? '(not found)'}\nReply: ${replyText}`;
}

/** Turns that ended in an error, as "User: … / Error: …". */
function failures(session: Session): string[] {
  const records = session.all();
  const out: string[] = [];
  for (const record of records) {
    if (record.type !== 'notice' || record.level !== 'error' || !record.turn) continue;
    out.push(`User: ${userMessageOf(records, record.turn) ?? '(not found)'}\nError: ${record.text}`);
  }
  return out;
}

function userMessageOf(records: readonly SessionRecord[], turn: string): string | undefined {
  const user = records.find((r) => r.type === 'message' && r.turn === turn && r.message.role === 'user');
  return user?.type === 'message' ? contentText(user.message) : undefined;
}
