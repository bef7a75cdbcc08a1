import type { ApprovalAnswer, MAX_PREFIX_CHARS, TranscriptEntry } from '../src/protocol/chat';
import { visibleLabel } from '../src/shared/visibleText';
import { actionButton, actionRow, code, disable, foldable, line, lineCount, liveNote, uniqueId, visibleNodes, who } from './entryParts';

type ApprovalEntry = Extract<TranscriptEntry, { kind: 'approval' }>;
type CommandAsk = Extract<ApprovalEntry['ask'], { kind: 'command' }>;
type McpAsk = Extract<ApprovalEntry['ask'], { kind: 'mcp' }>;
type Decision = ApprovalAnswer['decision'];

/**
 * The protocol's MAX_PREFIX_CHARS: only its types reach the webview, and
 * the type of that constant is its value, so a change there fails here.
 */
const PREFIX_LIMIT: typeof MAX_PREFIX_CHARS = 4096;
/** How near its end an output counts as followed, in pixels. */
const END_SLACK = 8;

// The host sends an entry again whenever it changes, and each time the
// entry is drawn anew: what the user did to the one shown is kept here, by
// entry id, and given to the next.
/** Always Allow prefixes being edited. */
const drafts = new Map<string, string>();
/** Where the user left each output: at its end (it follows the stream) or scrolled up to a position. */
const outputScroll = new Map<string, number | 'end'>();

/**
 * A command or an MCP call that waits for the user, then what came of it
 * (docs/architecture.md, "Approvals"). Nothing here takes the focus: the
 * user may be typing in the message box when a call comes in; a live note
 * says it instead.
 */
export function renderApproval(el: HTMLElement, entry: ApprovalEntry, answer: (message: ApprovalAnswer) => void): void {
  const { ask } = entry;
  el.dataset.state = entry.decision;
  el.replaceChildren(who(ask.kind === 'command' ? 'Command' : 'MCP tool'), ...(ask.kind === 'command' ? commandAsk(ask) : mcpAsk(entry.id, ask)));
  if (entry.decision !== 'pending') {
    el.append(...result(entry));
    return;
  }
  const send = (decision: Decision, prefix?: string): void => answer({ type: 'approval', id: entry.id, decision, ...(prefix === undefined ? {} : { prefix }) });
  if (ask.kind === 'command') {
    el.append(liveNote(entry.id, `Candor asks to run ${visibleLabel(ask.command)}`), ...commandButtons(entry.id, ask, send));
  } else {
    el.append(liveNote(entry.id, `Candor asks to call ${visibleLabel(ask.tool)} on ${visibleLabel(ask.server)}`), mcpButtons(ask, send));
  }
}

function commandAsk(ask: CommandAsk): HTMLElement[] {
  const command = document.createElement('pre');
  command.className = 'approval-command';
  command.dir = 'ltr';
  command.append(...visibleNodes(ask.command));
  const meta = line('approval-meta', 'Folder: ', code(ask.folder), ` · network: ${ask.network ? 'on' : 'off'}`);
  return [command, meta];
}

function mcpAsk(id: string, ask: McpAsk): HTMLElement[] {
  const meta = line('approval-meta', 'Server: ', code(ask.server), ' · Tool: ', code(ask.tool));
  const args = document.createElement('pre');
  args.className = 'approval-args';
  args.append(...visibleNodes(ask.args, { keepLayout: true }));
  return [meta, foldable(`${id}:args`, args, lineCount(ask.args), 'the arguments')];
}

/** Run, Deny, Always Allow (with its prefix field) and Run in Terminal, each named with the command it answers. */
function commandButtons(id: string, ask: CommandAsk, send: (decision: Decision, prefix?: string) => void): HTMLElement[] {
  const name = visibleLabel(ask.command);
  const row = actionRow();
  const answered = (decision: Decision, prefix?: string): void => {
    disable(row);
    form.el.hidden = true;
    send(decision, prefix);
  };
  const always = actionButton('Always Allow', `Always Allow ${name}`, 'secondary', 'always', () => form.open());
  const terminal = actionButton('Run in Terminal', `Run in Terminal ${name}`, 'secondary', 'terminal', () => answered('terminal'));
  row.append(
    actionButton('Run', `Run ${name}`, 'primary', 'run', () => answered('run')),
    actionButton('Deny', `Deny ${name}`, 'secondary', 'deny', () => answered('deny')),
    always,
    terminal,
  );
  if (ask.noTerminal !== null) row.append(unavailable(terminal, `Run in Terminal is off: ${ask.noTerminal}`));
  const form = prefixForm(id, ask.command, always, (prefix) => answered('always', prefix));
  return [row, form.el];
}

function mcpButtons(ask: McpAsk, send: (decision: Decision) => void): HTMLElement {
  const name = visibleLabel(ask.tool);
  const row = actionRow();
  const answered = (decision: Decision): void => {
    disable(row);
    send(decision);
  };
  row.append(
    actionButton('Allow', `Allow ${name}`, 'primary', 'run', () => answered('run')),
    actionButton('Deny', `Deny ${name}`, 'secondary', 'deny', () => answered('deny')),
    actionButton('Always Allow', `Always Allow ${name}`, 'secondary', 'always', () => answered('always')),
  );
  return row;
}

/** A button that stays in the Tab order, says why it does nothing, and does nothing. */
function unavailable(button: HTMLButtonElement, why: string): HTMLElement {
  const note = line('approval-why', why);
  note.id = uniqueId('approval-why');
  button.setAttribute('aria-disabled', 'true');
  button.setAttribute('aria-describedby', note.id);
  button.title = why;
  return note;
}

/**
 * Always Allow's inline form: the prefix to remember, prefilled with the
 * exact command. The answer carries the prefix only when the user changed
 * it; none means this exact command.
 */
function prefixForm(id: string, command: string, opener: HTMLButtonElement, confirmed: (prefix: string | undefined) => void): { el: HTMLElement; open(): void } {
  const el = document.createElement('div');
  el.className = 'always-form';
  el.id = uniqueId('always-form');
  const { field, label, exact } = prefixField(`${el.id}-field`, command, drafts.get(id));
  const shownAs = line('always-shown');
  const problem = line('always-problem');
  problem.id = `${el.id}-problem`;
  problem.setAttribute('aria-live', 'polite');
  const confirm = actionButton('Always Allow', '', 'primary', 'always-confirm', () => submit());
  const cancel = actionButton('Cancel', 'Cancel Always Allow', 'secondary', 'always-cancel', () => close());
  const setOpen = (open: boolean): void => {
    el.hidden = !open;
    opener.setAttribute('aria-expanded', String(open));
    if (open) drafts.set(id, field.value);
    else drafts.delete(id);
  };
  const changed = (): void => {
    const name = `Always Allow ${visibleLabel(field.value)}`;
    confirm.setAttribute('aria-label', name);
    confirm.title = name;
    const visible = visibleNodes(field.value);
    // Shown only when the field cannot show it: a control or an invisible character in the prefix.
    shownAs.replaceChildren(...(visible.some((n) => n instanceof HTMLElement) ? ['Allows: ', ...visible] : []));
    problem.textContent = '';
    field.removeAttribute('aria-invalid');
  };
  const submit = (): void => {
    const value = field.value;
    const why = prefixProblem(value);
    if (why !== '') {
      problem.textContent = why;
      field.setAttribute('aria-invalid', 'true');
      field.setAttribute('aria-describedby', problem.id);
      return;
    }
    setOpen(false);
    confirmed(value === exact ? undefined : value);
  };
  const close = (): void => {
    setOpen(false);
    opener.focus();
  };
  field.addEventListener('input', () => {
    drafts.set(id, field.value);
    changed();
  });
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    }
  });
  const buttons = actionRow();
  buttons.append(confirm, cancel);
  el.append(label, field, shownAs, problem, buttons);
  opener.setAttribute('aria-controls', el.id);
  changed();
  setOpen(drafts.has(id));
  const open = (): void => {
    setOpen(true);
    field.focus();
    field.setSelectionRange(field.value.length, field.value.length);
  };
  return { el, open };
}

/**
 * The prefix field, holding `draft` or else the command; `exact` is the
 * command as the field holds it (line breaks as LF), what "unchanged" is
 * measured against.
 */
function prefixField(id: string, command: string, draft: string | undefined): { field: HTMLTextAreaElement; label: HTMLLabelElement; exact: string } {
  const field = document.createElement('textarea');
  field.id = id;
  field.rows = 1;
  field.spellcheck = false;
  field.dataset.keep = 'prefix';
  field.value = command;
  const exact = field.value;
  field.value = draft ?? exact;
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = 'Allow commands starting with';
  return { field, label, exact };
}

/** What keeps a prefix from being sent (the host would drop it); '' when nothing does. */
function prefixProblem(value: string): string {
  if (value.trim() === '') return 'Type the start of the commands to allow.';
  if (value.length > PREFIX_LIMIT) return `A prefix holds at most ${PREFIX_LIMIT} characters.`;
  return '';
}

/** After the decision: what happened, the output, and how it ended. */
function result(entry: ApprovalEntry): HTMLElement[] {
  const parts = [line('approval-status', statusText(entry))];
  if (entry.output !== undefined && entry.output !== '') parts.push(outputBlock(entry.id, entry.output));
  if (entry.outcome !== undefined) parts.push(line('approval-outcome', entry.outcome));
  return parts;
}

function statusText(entry: ApprovalEntry): string {
  const ended = entry.outcome !== undefined;
  switch (entry.decision) {
    case 'allowed': {
      const done = entry.ask.kind === 'command' ? (ended ? 'Ran' : 'Running…') : ended ? 'Called' : 'Calling…';
      return entry.auto === undefined ? done : `${done} · Allowed by: ${entry.auto}`;
    }
    case 'denied':
      return 'Denied';
    case 'terminal':
      return 'Typed into a terminal, not run';
    case 'stopped':
      return 'Stopped';
    case 'pending':
      return 'Waiting for your answer';
  }
}

/**
 * The output, scrolled to its end while it streams; once the user scrolls
 * up it stays where they left it, through every resend, until they scroll
 * back down.
 */
function outputBlock(id: string, output: string): HTMLElement {
  const pre = document.createElement('pre');
  pre.className = 'approval-output';
  pre.tabIndex = 0; // a scrolling box the keyboard can scroll too
  pre.dataset.keep = 'output';
  pre.append(...visibleNodes(output, { keepLayout: true }));
  pre.addEventListener('scroll', () => outputScroll.set(id, pre.scrollTop + pre.clientHeight >= pre.scrollHeight - END_SLACK ? 'end' : pre.scrollTop), { passive: true });
  // After the entry is in the page, where its height is known.
  requestAnimationFrame(() => {
    const at = outputScroll.get(id) ?? 'end';
    pre.scrollTop = at === 'end' ? pre.scrollHeight : at;
  });
  return pre;
}
