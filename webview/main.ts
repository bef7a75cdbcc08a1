import type { DriftView, GaugeState, GitInfo, HostMessage, ProviderInfo, TranscriptEntry, WebviewMessage } from '../src/protocol/chat';
import { registerToolkit, button, setDisabled } from './toolkit';
import { renderMarkdown } from './markdown';
import { renderDrift } from './drift';
import { renderRants } from './rants';

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

const entries = new Map<string, { entry: TranscriptEntry; el: HTMLElement; text: string }>();
let busy = false;
let pendingRender = new Set<string>();

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
      transcript.replaceChildren();
      entries.clear();
      message.entries.forEach(addEntry);
      setBusy(message.busy);
      setProvider(message.provider);
      if (message.gauge) setGauge(message.gauge);
      welcome.hidden = !message.welcome || message.entries.length > 0;
      $('session-title').textContent = message.sessionTitle;
      $('untrusted').hidden = message.trusted;
      scrollDown();
      break;
    case 'entry':
      welcome.hidden = true;
      addEntry(message.entry);
      scrollDown();
      break;
    case 'delta':
      appendDelta(message.id, message.text);
      break;
    case 'replaceText':
      replaceText(message.id, message.text);
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

function addEntry(entry: TranscriptEntry): void {
  const el = document.createElement('div');
  el.className = `entry ${entry.kind}`;
  el.dataset.id = entry.id;
  el.setAttribute('role', 'article');
  const text = 'text' in entry ? entry.text : '';
  if (entry.kind === 'assistant' && entry.streaming) {
    el.classList.add('streaming');
    el.setAttribute('aria-busy', 'true');
  }
  renderBody(el, entry, text);
  // An entry sent again under the same id replaces the old one in place: a streamed reply becomes its
  // record's entry (the whole reply, or an incomplete one), an error's Retry goes once something follows it.
  const previous = entries.get(entry.id)?.el;
  entries.set(entry.id, { entry, el, text });
  if (previous?.isConnected) previous.replaceWith(el);
  else transcript.append(el);
}

function appendDelta(id: string, delta: string): void {
  const item = entries.get(id);
  if (!item) return;
  item.text += delta;
  pendingRender.add(id);
  requestAnimationFrame(flush);
}

/** The host redacted text this entry already shows (a key split across deltas): start over from its whole text. */
function replaceText(id: string, text: string): void {
  const item = entries.get(id);
  if (!item) return;
  item.text = text;
  pendingRender.add(id);
  requestAnimationFrame(flush);
}

function flush(): void {
  const ids = pendingRender;
  pendingRender = new Set();
  for (const id of ids) {
    const item = entries.get(id);
    if (item) renderBody(item.el, item.entry, item.text);
  }
  scrollDown();
}

function renderBody(el: HTMLElement, entry: TranscriptEntry, text: string): void {
  el.replaceChildren();
  const who = document.createElement('div');
  who.className = 'who';
  const body = document.createElement('div');
  body.className = 'body';
  switch (entry.kind) {
    case 'user':
      who.textContent = 'You';
      body.textContent = text;
      break;
    case 'assistant':
    case 'partial':
      who.textContent = entry.kind === 'partial' ? 'Candor (incomplete reply)' : 'Candor';
      body.innerHTML = renderMarkdown(text);
      if (entry.kind === 'assistant' && !el.classList.contains('streaming')) {
        el.append(who, body, feedbackButtons(entry.id));
        return;
      }
      break;
    case 'summary':
      who.textContent = 'Compaction';
      body.textContent = text;
      break;
    case 'tool-call':
    case 'tool-result': {
      const details = document.createElement('details');
      const summary = document.createElement('summary');
      summary.textContent = entry.kind === 'tool-call'
        ? `Tool call: ${entry.name} (${entry.args.length} chars)`
        : `Tool result: ${entry.name} (${entry.bytes.toLocaleString()} bytes)`;
      const pre = document.createElement('pre');
      pre.textContent = entry.kind === 'tool-call' ? entry.args : entry.text;
      details.append(summary, pre);
      el.append(details);
      return;
    }
    case 'notice': {
      el.classList.add(entry.level);
      el.setAttribute('role', entry.level === 'error' ? 'alert' : 'status');
      body.textContent = text;
      el.append(body);
      if (entry.retryable) el.append(button('Retry', 'primary', () => vscode.postMessage({ type: 'retry' })));
      return;
    }
  }
  el.append(who, body);
}

function feedbackButtons(entryId: string): HTMLElement {
  const row = document.createElement('div');
  row.className = 'feedback';
  const send = (value: 'up' | 'down', chosen: HTMLElement): void => {
    vscode.postMessage({ type: 'feedback', entryId, value });
    row.querySelectorAll('vscode-button').forEach((b) => b.classList.remove('chosen'));
    chosen.classList.add('chosen');
  };
  const up: HTMLElement = button('▲', 'icon', () => send('up', up), 'Good reply');
  const down: HTMLElement = button('▼', 'icon', () => send('down', down), 'Bad reply');
  row.append(up, down);
  return row;
}

function scrollDown(): void {
  transcript.scrollTop = transcript.scrollHeight;
}

vscode.postMessage({ type: 'ready' });
