/**
 * The chat view's page body, apart from the view so that the webview's
 * benchmark (bench/session.bench.ts) loads the very page VS Code shows.
 * The script (webview/main.ts) fills it in.
 */
export const CHAT_BODY = `<header>
  <div class="header-row"><span id="provider"></span><span id="header-actions"></span></div>
  <div class="header-row"><span id="gauge" aria-live="polite"></span></div>
  <div class="header-row"><span id="git"></span></div>
  <div class="header-row" hidden><span id="tools-commands"></span></div>
  <div class="header-row" hidden><span id="tools-mcp"></span></div>
  <div class="header-row"><span id="session-title"></span></div>
</header>
<main id="chat-view">
  <div id="untrusted" hidden>This workspace is not trusted: Candor chats, but its file tools, evolution runs and workspace settings that send your key or run commands are off. Trust the workspace to turn them on.</div>
  <section id="welcome" hidden aria-label="Welcome">
    <h2>Welcome to Candor</h2>
    <p>No provider is configured, so you are talking to the <strong>offline demo</strong>: scripted replies, not a model. It runs inside VS Code and needs no network.</p>
    <p>Try: “list files” (a tool call), “reply without usage” (the gauge warns), or <code>/rant</code> followed by a complaint.</p>
    <p>To use a real model, press <strong>Model</strong> above: it lists the local servers it finds (Ollama, LM Studio, llama.cpp, vLLM), which need no API key, and can add a port or a base URL. A hosted provider also needs <em>Candor: Set API Key</em> (or <code>OPENAI_API_KEY</code>).</p>
  </section>
  <details id="rants-panel"><summary id="rants-summary">Rants</summary><div id="rants-body"></div></details>
  <section id="empty-hint" hidden aria-label="New session">
    <p>A new session. Ask about the code in this workspace: Candor can read and search its files, see its git status and history, propose edits for you to accept, and run the commands you approve (tests, builds) in a sandboxed copy of the workspace.</p>
    <p><code>/rant</code> followed by a complaint records what went wrong; Ctrl+F finds in the chat.</p>
  </section>
  <div id="transcript" role="log" aria-label="Conversation" aria-live="polite" tabindex="0"></div>
  <div id="request-status" role="status" hidden></div>
  <div id="composer">
    <textarea id="input" aria-label="Message Candor" placeholder="Message Candor (Enter to send, Shift+Enter for a new line, /rant to complain)"></textarea>
    <div id="composer-actions"></div>
  </div>
</main>
<section id="drift-view" hidden aria-label="Drift">
  <div id="drift-back"></div>
  <div id="drift-body"></div>
</section>`;
