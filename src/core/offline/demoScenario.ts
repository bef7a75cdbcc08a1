import type { Scenario } from './scenario';

/**
 * The built-in demo: a streamed reply, a tool call, and — when asked — a
 * request without usage, so a newcomer sees the gauge warn without a network.
 * Its answer to anything else is a guide: what to try, and how to move to a
 * real model from where the user stands (the chat's Model button).
 */
export const demoScenario: Scenario = {
  name: 'Candor offline demo',
  models: ['candor-offline'],
  rules: [
    {
      // Summaries Candor asks for itself: compaction.
      match: { system: '^You compact' },
      respond: { text: 'Summary: the user tried the offline demo of Candor.' },
    },
    {
      // The memory condense: short, and honest that no model read the notes.
      match: { system: '^You condense' },
      respond: { text: '# Memory (condensed by the offline demo)\nScripted summary, not a model: the previous notes are in memory.md.bak.' },
    },
    {
      match: { lastRole: 'tool' },
      respond: { text: 'The tool answered ({{toolChars}} characters). In a real session a model would now reason about it; this offline demo only shows the round trip.' },
    },
    {
      match: { user: '\\b(list|files|tool)\\b' },
      respond: { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
    },
    {
      match: { user: 'no usage|without usage' },
      usage: false,
      respond: { text: 'This reply comes **without usage numbers**, as some providers do. Candor cannot anchor its count to it: watch the gauge turn to its warning colour and a loss being counted in the drift view.' },
    },
    {
      respond: {
        text:
          'This is the **offline demo** — scripted replies, not a model.\n\n' +
          'You said: _{{user}}_\n\n' +
          'Things to try:\n' +
          '- ask me to **list files** to see a tool call;\n' +
          '- ask for a reply **without usage** to see the gauge warn;\n' +
          '- type `/rant something annoying` to file a complaint.\n\n' +
          'To use a real model, press **Model** at the top of this view (or run **Candor: Select Model**). '
          + 'It lists the local servers it finds (Ollama, LM Studio, llama.cpp, vLLM), which need no API key; '
          + 'a server on another port is one **Add a port…** away. '
          + 'For a hosted provider, choose **Use a base URL…**, then run **Candor: Set API Key**.',
      },
    },
  ],
};
