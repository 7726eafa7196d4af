/**
 * UTF-8 byte counts without Buffer, for the runtime-neutral code (the dialect's code cap, the run
 * record's bound). Most texts are ASCII, so one scan usually settles the count without encoding.
 */

/** A unit that takes more than one byte of UTF-8. */
const NON_ASCII = /[\u0080-\uffff]/;
const encoder = new TextEncoder();

/** UTF-8 bytes of `text`: its length when it is all ASCII (one scan), else encoded once. */
export function utf8Bytes(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).byteLength : text.length;
}
