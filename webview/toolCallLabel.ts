/**
 * A tool call's row in the chat, in words: the tool and what it was asked,
 * not the size of its JSON ("list_files (2 chars)" said nothing). The whole
 * arguments stay in the row's details.
 */
export function toolCallLabel(name: string, args: string): string {
  const shown = argumentsShown(args);
  return `Tool call: ${name}${shown === '' ? ' (no arguments)' : ` — ${shown}`}`;
}

const MAX_VALUE = 40;
const MAX_ALL = 80;

/** `path: "src", depth: 2`, clipped; '' for none; the text as it came when it is not a JSON object. */
function argumentsShown(args: string): string {
  const text = args.trim();
  if (text === '' || text === '{}') return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return clip(oneLine(text), MAX_ALL);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return clip(oneLine(text), MAX_ALL);
  const pairs = Object.entries(parsed as Record<string, unknown>).map(([key, value]) => `${key}: ${clip(oneLine(JSON.stringify(value) ?? String(value)), MAX_VALUE)}`);
  return clip(pairs.join(', '), MAX_ALL);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
