import type { DriftView, GaugeState, GitInfo, HostMessage, ProviderInfo, WebviewMessage } from '../src/protocol/chat';
import { registerToolkit, button, setDisabled } from './toolkit';
import { renderDrift } from './drift';
import { renderRants } from './rants';
import { TranscriptList } from './transcriptList';
import { FindBox } from './findBox';

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
const chatView = $('chat-view');
const driftView = $('drift-view');

const send = button('Send', 'primary', () => submit());
const stop = button('Stop', 'secondary', () => vscode.postMessage({ type: 'stop' }));
$('composer-actions').append(send, stop);
setDisabled(stop, true);
$('header-actions').append(
  button('Model', 'secondary', () => vscode.postMessage({ type: 'runCommand', command: 'candor.selectModel' }), 'Select Model'),
  button('New', 'secondary', () => vscode.postMessage({ type: 'runCommand', command: 'candor.newSession' }), 'New Session'),
  button('Drift', 'secondary', () => vscode.postMessage({ type: 'runCommand', command: 'candor.showDrift' }), 'Show Drift'),
);
$('drift-back').append(button('Back to chat', 'secondary', () => showChat()));

let busy = false;
/** The session shown: answers about another one (after a switch) are dropped. */
let session = '';
const list = new TranscriptList(transcript, {
  loadOlder: (before) => vscode.postMessage({ type: 'loadOlder', session, before }),
  feedback: (entryId, value) => vscode.postMessage({ type: 'feedback', entryId, value }),
  retry: () => vscode.postMessage({ type: 'retry' }),
});
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
      $('session-title').textContent = message.sessionTitle;
      $('untrusted').hidden = message.trusted;
      markShown();
      break;
    case 'entry':
      welcome.hidden = true;
      list.put(message.entry);
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
      list.delta(message.id, message.text);
      break;
    case 'replaceText':
      list.replaceText(message.id, message.text);
      break;
    case 'busy':
      setBusy(message.busy);
      break;
    case 'gauge':
      setGauge(message.gauge);
      break;
    case 'provider':
      setProvider(message.provider);
      break;
    case 'git':
      setGit(message.git);
      break;
    case 'rants':
      renderRants($('rants-body'), $('rants-summary'), message.rants, message.runs, (m) => vscode.postMessage(m));
      break;
    case 'drift':
      chatView.hidden = true;
      driftView.hidden = false;
      renderDrift($('drift-body'), message.drift as DriftView);
      break;
  }
});

function setBusy(value: boolean): void {
  busy = value;
  setDisabled(send, value);
  setDisabled(stop, !value);
  document.body.classList.toggle('busy', value);
}

function setProvider(provider: ProviderInfo): void {
  providerLabel.textContent = provider.offline ? `${provider.label} · ${provider.model}` : `${provider.model} @ ${provider.provider}`;
  providerLabel.title = provider.offline ? 'Set candor.baseUrl to use a real provider' : `${provider.model} @ ${provider.provider}`;
  providerLabel.classList.toggle('offline', provider.offline);
}

function setGauge(gauge: GaugeState): void {
  const percent = gauge.window > 0 ? Math.round((gauge.projected / gauge.window) * 100) : 0;
  gaugeLabel.textContent = `Context ${percent}% · ${gauge.projected.toLocaleString()} / ${gauge.window.toLocaleString()} · ${gauge.anchored ? 'anchored' : 'estimated'}`;
  gaugeLabel.classList.toggle('warning', gauge.warning);
  gaugeLabel.title = gauge.warning ? 'The provider stopped reporting usage: this is an estimate.' : '';
}

function setGit(git: GitInfo): void {
  gitLabel.textContent = git.available ? `${git.summary}${git.readOnly ? ' · read-only' : ''}` : git.summary;
  gitLabel.title = git.reasons.join('\n');
  gitLabel.classList.toggle('dirty', git.readOnly);
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
