// Session files of any length, written as Candor writes them (one JSON line
// per record, `v: 1`, an ISO `ts`), for the tests and the benchmark of
// opening long sessions: user questions and markdown replies in turns, a
// gate record after each reply (no anchor yet: no warning on the next
// request), and, every `toolEvery` turns, a tool call
// and its result.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Session } from '../../../../src/core/session/session';

export interface LongSessionOptions {
  /** Messages (user, assistant and tool), not counting gate and meta records. */
  readonly messages: number;
  /** The session id; the file is `<dir>/<id>.jsonl`. */
  readonly id?: string;
  /** The first user message (the title comes from it). */
  readonly first?: string;
  /** A tool round every this many turns (0: none). */
  readonly toolEvery?: number;
  /** Write the title record (files written before it existed have none). */
  readonly titleRecord?: boolean;
  /** Time of the first record; each next one is a second later. */
  readonly start?: Date;
}

export interface LongSession {
  readonly file: string;
  readonly id: string;
  /** Ids of the message records, oldest first. */
  readonly messageIds: readonly string[];
}

/** Text of the user message of turn `i` (after the first). */
export function questionText(i: number): string {
  return `Question ${i}: what does step ${i} of the plan change?`;
}

export function replyText(i: number): string {
  return `Step ${i} **changes** one thing:\n\n- it reads \`part-${i}\`\n- it writes the result\n\nDone with step ${i}.`;
}

export function writeLongSession(dir: string, options: LongSessionOptions): LongSession {
  fs.mkdirSync(dir, { recursive: true });
  const id = options.id ?? `01long${String(options.messages).padStart(8, '0')}`;
  const file = path.join(dir, `${id}.jsonl`);
  const start = (options.start ?? new Date('2026-01-01T00:00:00Z')).getTime();
  const toolEvery = options.toolEvery ?? 0;
  const first = options.first ?? questionText(0);
  const lines: string[] = [];
  let clock = 0;
  const line = (record: Record<string, unknown>): void => {
    lines.push(JSON.stringify({ v: 1, ts: new Date(start + 1000 * clock++).toISOString(), ...record }));
  };
  line({ type: 'meta', id, project: 'demo' });
  if (options.titleRecord !== false) line({ type: 'meta', id, title: first.replace(/\s+/g, ' ').trim().slice(0, 60) });
  const messageIds: string[] = [];
  const message = (turn: string, msg: Record<string, unknown>): void => {
    const recordId = `m${String(messageIds.length).padStart(7, '0')}`;
    messageIds.push(recordId);
    line({ type: 'message', id: recordId, turn, message: msg });
  };
  for (let t = 0; messageIds.length < options.messages; t++) {
    const turn = `t${t}`;
    message(turn, { role: 'user', content: t === 0 ? first : questionText(t) });
    if (toolEvery > 0 && t % toolEvery === toolEvery - 1 && messageIds.length + 3 <= options.messages) {
      const call = `call_${t}`;
      message(turn, { role: 'assistant', content: null, tool_calls: [{ id: call, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `part-${t}.txt` }) } }] });
      message(turn, { role: 'tool', tool_call_id: call, content: `contents of part-${t}.txt` });
    }
    if (messageIds.length < options.messages) message(turn, { role: 'assistant', content: replyText(t) });
    line({ type: 'gate', state: { v: 1, anchor: null, established: false, afterCompaction: false, afterSwitch: false, window: null, previous: null } });
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, id, messageIds };
}

/**
 * A session of `messages` messages with a hole of `holeBytes` in the middle
 * (a sparse file: no disk used, no newline in it): its first `headLines`
 * lines, the hole, then its newest `tailLines` lines. Reading the whole file
 * fails once the hole is longer than a string can be (512 MiB); a reader of
 * the file's ends never sees the hole.
 */
export function writeSessionWithHole(dir: string, options: LongSessionOptions & { holeBytes: number; headLines: number; tailLines: number }): LongSession {
  const written = writeLongSession(dir, options);
  const lines = fs.readFileSync(written.file, 'utf8').trimEnd().split('\n');
  fs.writeFileSync(written.file, `${lines.slice(0, options.headLines).join('\n')}\n`);
  fs.truncateSync(written.file, fs.statSync(written.file).size + options.holeBytes);
  fs.appendFileSync(written.file, `\n${lines.slice(-options.tailLines).join('\n')}\n`);
  return written;
}

/** Larger than the longest string Node makes (0x1fffffe8 characters): reading a file with this hole whole fails. */
export const UNREADABLE_HOLE = 540 * 1024 ** 2;

/**
 * A session with everything whose mapping depends on other records: tool
 * results named after their calls (several calls per reply), a compaction,
 * a partial reply, retryable errors (one retried, one still open), notices.
 */
export async function richSession(dir: string, turns: number): Promise<Session> {
  const session = Session.create(dir, 'demo');
  for (let t = 0; t < turns; t++) {
    const turn = `t${t}`;
    const asked = session.addMessage(turn, { role: 'user', content: `question ${t}` });
    if (t % 3 === 1) {
      const calls = [0, 1, 2].map((c) => ({ id: `call-${t}-${c}`, type: 'function' as const, function: { name: `tool_${c}`, arguments: `{"n":${c}}` } }));
      session.addMessage(turn, { role: 'assistant', content: c0(t), tool_calls: calls });
      for (const call of calls) session.addMessage(turn, { role: 'tool', tool_call_id: call.id, content: `result of ${call.function.name}` });
    }
    if (t % 7 === 2) {
      session.append({ type: 'partial', id: `partial-${t}`, turn, text: 'half a rep' });
      session.append({ type: 'notice', id: `err-${t}`, turn, level: 'error', text: 'HTTP 500', retryable: true });
      session.append({ type: 'gate', state: { n: t } });
    }
    if (t % 11 === 5) session.append({ type: 'compaction', id: `k-${t}`, replaces: [asked], summary: { role: 'user', content: 'summary' } });
    session.addMessage(turn, { role: 'assistant', content: `answer **${t}**` });
    session.append({ type: 'notice', id: `n-${t}`, turn, level: 'info', text: `info ${t}` });
    session.append({ type: 'gate', state: { n: t } });
  }
  // The last turn fails and can still be retried.
  session.addMessage('last', { role: 'user', content: 'the last question' });
  session.append({ type: 'notice', id: 'err-last', turn: 'last', level: 'error', text: 'HTTP 503', retryable: true });
  session.append({ type: 'gate', state: { n: 'last' } });
  await session.flushed();
  return session;
}

function c0(t: number): string {
  return t % 2 === 0 ? '' : `calling tools for ${t}`;
}
