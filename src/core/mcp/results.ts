import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MATCH_REACH, secretForms, type SecretSet } from '../redact';
import { isRecord, oneLine } from '../text';
import { truncationMarker, utf8Boundary } from '../workspace/bounded';
import { DEFAULT_RESULT_BYTES } from './limits';
import type { McpCallResult } from './types';

/**
 * A tool's result as the model gets it (docs/architecture.md, "MCP"): the
 * text parts joined, each image, audio clip and resource named with its
 * size instead of its bytes, then redacted and cut to `maxBytes` with a
 * marker saying how much was cut.
 *
 * Only what can be shown is redacted: the parts are gathered until a window
 * of `maxBytes` plus a reach is full (the rest is only measured), the window
 * is redacted, and its last `reach` characters are dropped before the cut,
 * since a secret that crosses the window's end may be only half caught
 * there. A 5 MB result thus costs one pass to measure it and a redaction of
 * some 64 KB.
 */

type Content = CallToolResult['content'][number];

export function renderResult(result: CallToolResult, secrets: SecretSet, maxBytes = DEFAULT_RESULT_BYTES): McpCallResult {
  const reach = redactionReach(secrets);
  const gathered = gather(partsOf(result), maxBytes + reach);
  const redacted = secrets.redact(gathered.text);
  const isError = result.isError === true;
  if (!gathered.cut && Buffer.byteLength(redacted) <= maxBytes) return { isError, text: redacted, bytes: gathered.contentBytes };
  const safe = gathered.cut ? redacted.slice(0, Math.max(0, redacted.length - reach)) : redacted;
  const bytes = Buffer.from(safe, 'utf8');
  const shown = bytes.subarray(0, utf8Boundary(bytes, maxBytes));
  const text = `${shown.toString('utf8')}\n${truncationMarker(shown.length, Math.max(gathered.textBytes, shown.length), 'bytes')}`;
  return { isError, text, bytes: gathered.contentBytes };
}

/** A human size: "512 B", "12.3 KB", "4.0 MB". */
function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

interface Part {
  /** What the model sees for this part. */
  readonly text: string;
  /** The part's own bytes (decoded, for binary content). */
  readonly bytes: number;
}

interface Gathered {
  /** The joined text, at most the window long. */
  readonly text: string;
  /** Whether anything was left out of the window. */
  readonly cut: boolean;
  /** UTF-8 bytes of the whole joined text. */
  readonly textBytes: number;
  /** Bytes of the content as the server sent it. */
  readonly contentBytes: number;
}

function gather(parts: Iterable<Part>, windowChars: number): Gathered {
  const kept: string[] = [];
  let chars = 0;
  let cut = false;
  let textBytes = 0;
  let contentBytes = 0;
  let first = true;
  for (const part of parts) {
    const separator = first ? '' : '\n';
    first = false;
    textBytes += separator.length + Buffer.byteLength(part.text);
    contentBytes += part.bytes;
    const piece = separator + part.text;
    if (chars + piece.length <= windowChars) {
      kept.push(piece);
      chars += piece.length;
    } else {
      if (chars < windowChars) kept.push(piece.slice(0, windowChars - chars));
      chars = windowChars;
      cut = true;
    }
  }
  return { text: kept.join(''), cut, textBytes, contentBytes };
}

function* partsOf(result: CallToolResult): Generator<Part> {
  const content = Array.isArray(result.content) ? result.content : [];
  for (const item of content) yield describe(item);
  if (content.length === 0 && result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent) ?? '';
    yield { text: json, bytes: Buffer.byteLength(json) };
  }
}

function describe(item: Content): Part {
  switch (item.type) {
    case 'text':
      return { text: item.text, bytes: Buffer.byteLength(item.text) };
    case 'image':
    case 'audio': {
      const bytes = base64Bytes(item.data);
      return { text: `[${item.type} ${short(item.mimeType)}, ${formatSize(bytes)}]`, bytes };
    }
    case 'resource_link': {
      const name = item.name && item.name !== item.uri ? ` (${short(item.name)})` : '';
      const mime = item.mimeType ? `, ${short(item.mimeType)}` : '';
      const size = typeof item.size === 'number' ? `, ${formatSize(item.size)}` : '';
      return { text: `[resource link ${short(item.uri)}${name}${mime}${size}]`, bytes: 0 };
    }
    case 'resource': {
      const resource = item.resource;
      const bytes = 'text' in resource && typeof resource.text === 'string' ? Buffer.byteLength(resource.text) : 'blob' in resource ? base64Bytes(resource.blob) : 0;
      const mime = resource.mimeType ? `, ${short(resource.mimeType)}` : '';
      return { text: `[resource ${short(resource.uri)}${mime}, ${formatSize(bytes)}]`, bytes };
    }
    default:
      return unknownPart(item);
  }
}

/** A content type newer than this code: named, not shown. */
function unknownPart(item: unknown): Part {
  const type = isRecord(item) && typeof item.type === 'string' ? item.type : 'unknown';
  return { text: `[${short(type)} content, not shown]`, bytes: 0 };
}

function short(text: string): string {
  return oneLine(text, 200);
}

/** The decoded size of base64 `data`, computed without decoding it. */
function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Buffer.byteLength(data, 'base64') : 0;
}

/** How far past the shown text redaction must look: the longest form of any known secret, and at least the patterns' reach. */
function redactionReach(secrets: SecretSet): number {
  let longest = 0;
  for (const value of secrets.values()) for (const form of secretForms(value)) longest = Math.max(longest, form.length);
  return Math.max(MATCH_REACH * 8, longest * 2);
}
