/** Size bounds for tool output, each with a marker the model and the user can see. */

export interface ToolOutput {
  readonly text: string;
  /** True when the text was cut and carries a `[truncated: …]` marker. */
  readonly truncated: boolean;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

export function truncationMarker(shown: number, total: number, unit: string): string {
  return `[truncated: showed ${formatCount(shown)} of ${formatCount(total)} ${unit}]`;
}

/** At most `maxLines` lines, then a marker counting what was left out. */
export function boundLines(lines: readonly string[], maxLines: number, unit: string): ToolOutput {
  if (lines.length <= maxLines) return { text: lines.join('\n'), truncated: false };
  return { text: [...lines.slice(0, maxLines), truncationMarker(maxLines, lines.length, unit)].join('\n'), truncated: true };
}

/**
 * At most `maxBytes` bytes of UTF-8, cut at the last line break that fits
 * (or at a character boundary when one line is longer than the budget).
 */
export function boundText(text: string, maxBytes: number): ToolOutput {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let cut = utf8Boundary(bytes, maxBytes);
  const newline = bytes.lastIndexOf(0x0a, cut - 1);
  if (newline > 0) cut = newline + 1;
  const shown = bytes.subarray(0, cut).toString('utf8');
  return { text: `${shown}${shown.endsWith('\n') ? '' : '\n'}${truncationMarker(cut, bytes.length, 'bytes')}`, truncated: true };
}

/** The largest length ≤ `limit` that does not split a UTF-8 sequence. */
export function utf8Boundary(bytes: Uint8Array, limit: number): number {
  let end = Math.min(limit, bytes.length);
  if (end === bytes.length) return end;
  // Step back over continuation bytes to the start of the character at `end`.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return end;
}
