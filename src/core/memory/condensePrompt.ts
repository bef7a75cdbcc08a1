import type { ChatMessage } from '../messages';

const INSTRUCTIONS = [
  "You condense the memory file a coding agent keeps about one workspace: notes it saved for its future sessions.",
  'Rewrite it shorter. Keep every distinct fact, decision, user preference, path, command and open task, with exact names and values.',
  'Merge repetitions and drop notes that a newer note supersedes (the newest wins). Do not invent anything.',
  'Keep Markdown and the language of the notes. Reply with the new file content only: no preamble, no code fence.',
].join(' ');

export function condenseMessages(memory: string): ChatMessage[] {
  const bytes = Buffer.byteLength(memory, 'utf8');
  return [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: `Condense this memory file (${bytes} bytes) into a shorter one.\n\n<memory>\n${memory}\n</memory>` },
  ];
}

/** The summary as file content: an outer code fence removed, one trailing newline. */
export function summaryText(reply: string): string {
  let text = reply.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n```$/.exec(text);
  if (fenced) text = (fenced[1] ?? '').trim();
  return text === '' ? '' : `${text}\n`;
}
