/** The size of JSON text as the record's bound counts it: UTF-8 bytes. Runtime-neutral (no Buffer). */
import { utf8Bytes } from '../protocol/utf8-bytes.js';

/** UTF-8 bytes of `text` as the record writes it: a JSON string, quotes and escapes included. */
export function jsonStringBytes(text: string): number {
  return utf8Bytes(JSON.stringify(text));
}
