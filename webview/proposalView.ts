import type { ProposalAnswer, TranscriptEntry } from '../src/protocol/chat';
import { actionButton, actionRow, code, disable, foldable, line, lineCount, liveNote, visibleNodes, who } from './entryParts';
import { visibleLabel } from '../src/shared/visibleText';
import { diffLineKinds } from './diffLines';
import { icon } from './icons';

type ProposalEntry = Extract<TranscriptEntry, { kind: 'proposal' }>;

/**
 * An edit the agent proposed (docs/architecture.md, "Proposals"): the file,
 * its diff, and Accept / Reject / Show Diff while it waits. A stale one (the
 * file changed since) can no longer be accepted; a superseded one gave way
 * to a newer proposal for the same file.
 */
export function renderProposal(el: HTMLElement, entry: ProposalEntry, answer: (message: ProposalAnswer) => void): void {
  el.dataset.state = entry.state;
  const path = line('proposal-path', code(entry.path), ...(entry.created ? [' (new file)'] : []));
  el.replaceChildren(who('Proposed edit'), path, foldable(`${entry.id}:diff`, diffBlock(entry.diff), lineCount(entry.diff), `the diff of ${visibleLabel(entry.path)}`));
  const send = (decision: ProposalAnswer['decision']): void => answer({ type: 'proposal', id: entry.id, decision });
  switch (entry.state) {
    case 'pending':
      el.append(liveNote(entry.id, `Candor proposes an edit to ${visibleLabel(entry.path)}`), buttons(entry.path, true, send));
      break;
    case 'stale': {
      const note = line('proposal-stale', icon('warning'), 'The file changed since this was proposed: ask again, or Show Diff');
      el.append(note, buttons(entry.path, false, send));
      break;
    }
    case 'accepted':
      el.append(line('proposal-status', 'Accepted'));
      break;
    case 'rejected':
      el.append(line('proposal-status', 'Rejected'));
      break;
    case 'superseded':
      el.append(line('proposal-status', 'Superseded: a newer proposal for this file holds this edit too'));
      break;
  }
}

/** Accept (not on a stale proposal), Reject, and Show Diff, which opens the editor's diff and may be used again. */
function buttons(path: string, acceptable: boolean, send: (decision: ProposalAnswer['decision']) => void): HTMLElement {
  const name = visibleLabel(path);
  const row = actionRow();
  const show = actionButton('Show Diff', `Show Diff ${name}`, 'secondary', 'show', () => send('show'));
  const decided = (decision: 'accept' | 'reject'): void => {
    disable(row, [show]);
    send(decision);
  };
  if (acceptable) row.append(actionButton('Accept', `Accept ${name}`, 'primary', 'accept', () => decided('accept')));
  row.append(actionButton('Reject', `Reject ${name}`, acceptable ? 'secondary' : 'primary', 'reject', () => decided('reject')), show);
  return row;
}

/** The unified diff, one line per row: added and removed lines in the editor's diff colours, headers and hunks set apart. */
function diffBlock(diff: string): HTMLElement {
  const pre = document.createElement('pre');
  pre.className = 'diff';
  pre.dir = 'ltr';
  const lines = diff === '' ? [] : diff.replace(/\n$/, '').split('\n');
  const kinds = diffLineKinds(lines);
  for (const [n, text] of lines.entries()) {
    // A CR before the line feed is the file's line ending, not a character of the line.
    const row = document.createElement('span');
    row.className = `diff-line ${kinds[n] ?? 'context'}`;
    row.append(...visibleNodes(text.replace(/\r$/, ''), { keepLayout: true }));
    pre.append(row);
  }
  return pre;
}
