import type { DriftView, GaugeHeadline, GitInfo, HostMessage, ProviderInfo, ToolsInfo, WebviewMessage } from '../src/protocol/chat';
import { registerToolkit, button, setDisabled } from './toolkit';
import { renderDrift } from './drift';
import { renderRants } from './rants';
import { TranscriptList } from './transcriptList';
import { FindBox } from './findBox';
import { icon } from './icons';

interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
registerToolkit();

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const transcript = $('transcript');
const input = $<HTMLTextAreaElement>('input');
const providerLabel = $('provider');
const gaugeLabel = $('gauge');
const gitLabel = $('git');
const welcome = $('welcome');
const emptyHint = $('empty-hint');
const chatView = $('chat-view');
const driftView = $('drift-view');
/** The header's lines for the tools beyond the built-in ones: why commands are not offered, and MCP. */
const commandsLine = $('tools-commands');
const mcpLine = $('tools-mcp');
/** What a request waits for while nothing of its reply shows: "processing the prompt: 40%". */
const requestStatus = $('request-status');

const send = button('Send', 'primary', () => submit());
const stop = button('Stop', 'secondary', () => vscode.postMessage({ type: 'stop' }));
$('composer-actions').append(send, stop);
setDisabled(stop, true);
$('header-actions').append(
  button('Model', 'secondary', () => vscode.postMessage({ type: 'runCommand', command: 'candor.selectModel' }), 'Select Model'),
  button('New', 'secondary', () => vscode.postMessage({ type: 'runCommand', command: 'candor.newSession' }), 'New Session'),
  button('Drift', 'secondary', () => vscode.postMessage({ type: 'runCommand', command: 'candor.showDrift' }), 'Show Drift'),
);
const back = button('Back to chat', 'secondary', () => showChat());
$('drift-back').append(back);

let busy = false;
/** The session shown: answers about another one (after a switch) are dropped. */
let session = '';
const list = new TranscriptList(transcript, {
  loadOlder: (before) => vscode.postMessage({ type: 'loadOlder', session, before }),
  feedback: (entryId, value) => vscode.postMessage({ type: 'feedback', entryId, value }),
  retry: () => vscode.postMessage({ type: 'retry' }),
  answer: (message) => vscode.postMessage(message),
});
/** A session with nothing in it says what to do; the offline welcome says more and takes its place. */
const showEmptyHint = (): void => {
  emptyHint.hidden = list.size > 0 || !welcome.hidden;
};
const find = new FindBox(transcript, {
  find: (query, direction, from) => {
    const oldest = list.oldestId();
    vscode.postMessage({ type: 'find', session, query, direction, ...(from === undefined ? {} : { from }), ...(oldest === undefined ? {} : { oldest }) });
  },
  reveal: (id, query) => list.reveal(id, query),
  closed: () => {
    list.clearFound();
    input.focus();
  },
});

input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
  if (event.key === 'Escape' && busy) vscode.postMessage({ type: 'stop' });
});
input.addEventListener('input', () => vscode.setState({ draft: input.value }));
const saved = vscode.getState() as { draft?: string } | undefined;
if (saved?.draft) input.value = saved.draft;

function submit(): void {
  const text = input.value;
  if (text.trim() === '' || busy) return;
  vscode.postMessage({ type: 'send', text });
  input.value = '';
  vscode.setState({ draft: '' });
}

function showChat(): void {
  driftView.hidden = true;
  chatView.hidden = false;
  input.focus();
}

/** Where the cursor goes when a command shows the view: the message box, or Back while the drift view shows. */
function focusView(): void {
  if (chatView.hidden) back.focus();
  else input.focus();
}

// VS Code focuses the webview, not an element in it, when a command such as
// "Candor: Focus on Chat View" focuses the view: the message box takes that
// focus, unless the user is clicking somewhere in the view.
let pointerAt = -Infinity;
document.addEventListener('pointerdown', () => (pointerAt = performance.now()), { capture: true, passive: true });
window.addEventListener('focus', () => {
  if (performance.now() - pointerAt < 500) return;
  if (document.activeElement === null || document.activeElement === document.body) focusView();
});

window.addEventListener('message', (event: MessageEvent<HostMessage>) => {
  const message = event.data;
  switch (message.type) {
    case 'init':
      session = message.session;
      find.reset();
      list.reset(message.entries, message.more);
      setBusy(message.busy);
      setProvider(message.provider);
      if (message.gauge) setGauge(message.gauge);
      welcome.hidden = !message.welcome || message.entries.length > 0;
      showEmptyHint();
      $('session-title').textContent = message.sessionTitle;
      $('untrusted').hidden = message.trusted;
      markShown();
      break;
    case 'entry':
      welcome.hidden = true;
      list.put(message.entry);
      showEmptyHint();
      break;
    case 'older':
      if (message.session !== session || message.before !== list.oldestId()) list.dropPage();
      else list.prepend(message.entries, message.more);
      break;
    case 'found':
      if (message.session !== session) break;
      if (message.older.length > 0) list.prepend(message.older, message.more);
      find.answered(message);
      break;
    case 'delta':
      list.delta(message.id, message.text, message.part ?? 'text');
      break;
    case 'replaceText':
      list.replaceText(message.id, message.text, message.part ?? 'text');
      break;
    case 'busy':
      setBusy(message.busy, message.status);
      break;
    case 'gauge':
      setGauge(message.headline);
      break;
    case 'provider':
      setProvider(message.provider);
      break;
    case 'git':
      setGit(message.git);
      break;
    case 'tools':
      setTools(message.tools);
      break;
    case 'rants':
      renderRants($('rants-body'), $('rants-summary'), message.rants, message.runs, (m) => vscode.postMessage(m));
      break;
    case 'drift':
      chatView.hidden = true;
      driftView.hidden = false;
      renderDrift($('drift-body'), message.drift as DriftView);
      break;
    case 'focus':
      focusView();
      break;
    case 'showRants': {
      showChat();
      const panel = $<HTMLDetailsElement>('rants-panel');
      panel.open = true;
      $('rants-summary').focus();
      break;
    }
  }
});

function setBusy(value: boolean, status?: string): void {
  requestStatus.textContent = value && status ? status : '';
  requestStatus.hidden = !(value && status);
  busy = value;
  setDisabled(send, value);
  setDisabled(stop, !value);
  document.body.classList.toggle('busy', value);
}

/**
 * The provider as a person names it: the model's short name (never a file
 * path; cut with an ellipsis rather than widening the view) and the host and
 * port (the slug is for data files); the full id is in the tooltip.
 */
function setProvider(provider: ProviderInfo): void {
  if (provider.offline) {
    providerLabel.textContent = `${provider.label} · ${provider.name}`;
  } else {
    const name = document.createElement('span');
    name.className = 'model-name';
    name.textContent = provider.name;
    providerLabel.replaceChildren(name, ` @ ${provider.host}`);
  }
  providerLabel.title = provider.title;
  providerLabel.classList.toggle('offline', provider.offline);
}

/** The host writes the line in the status bar's words (its headline); the view only shows it. */
function setGauge(gauge: GaugeHeadline): void {
  gaugeLabel.replaceChildren(...(gauge.warning ? [icon('warning')] : []), gauge.text);
  gaugeLabel.classList.toggle('warning', gauge.warning);
  gaugeLabel.title = gauge.title;
}

function setGit(git: GitInfo): void {
  const text = git.available ? `${git.summary}${git.readOnly ? ' · read-only' : ''}` : git.summary;
  gitLabel.replaceChildren(...(git.readOnly ? [icon('warning')] : []), text);
  gitLabel.title = git.reasons.join('\n');
  gitLabel.classList.toggle('dirty', git.readOnly);
}

/** A header row holding one line, hidden until it has something to say. */
function setTools(tools: ToolsInfo): void {
  commandsLine.textContent = tools.commands === null ? '' : `Commands: ${tools.commands}`;
  (commandsLine.parentElement as HTMLElement).hidden = tools.commands === null;
  mcpLine.textContent = tools.mcp ?? '';
  (mcpLine.parentElement as HTMLElement).hidden = tools.mcp === null;
}

/**
 * A user-timing mark once the first frame after `init` is painted: how long
 * from `ready` until the newest entry shows is measured from these marks
 * (bench/session.bench.ts).
 */
function markShown(): void {
  requestAnimationFrame(() => setTimeout(() => performance.mark('candor:init-shown'), 0));
}

performance.mark('candor:ready');
vscode.postMessage({ type: 'ready' });
