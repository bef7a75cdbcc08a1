/** Byte-level helpers: the condense guard compares raw bytes, never decoded text. */

export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Decodes UTF-8, replacing invalid sequences with U+FFFD instead of throwing. */
export function decodeLossy(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

export function startsWithBytes(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > bytes.length) return false;
  return Buffer.from(bytes.buffer, bytes.byteOffset, prefix.length).equals(prefix);
}
