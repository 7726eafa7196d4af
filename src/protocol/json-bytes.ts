/** The size of JSON text as the record's bound counts it: UTF-8 bytes. Runtime-neutral (no Buffer). */

const NON_ASCII = /[\u0080-\uffff]/;
const encoder = new TextEncoder();

/** UTF-8 bytes of `text`: its length when it is all ASCII (one scan), else encoded once. */
export function utf8Bytes(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).byteLength : text.length;
}

/** UTF-8 bytes of `text` as the record writes it: a JSON string, quotes and escapes included. */
export function jsonStringBytes(text: string): number {
  return utf8Bytes(JSON.stringify(text));
}
