/**
 * The size of a program, counted before anything reads it, so a huge one costs its count and no
 * parse. Runtime-neutral (no Buffer): the dialect adapter in the root entry counts with it too.
 */
import { utf8Bytes } from './utf8-bytes.js';

/**
 * The default cap on a request's code, in UTF-8 bytes: `limits.maxCodeBytes` and `CodemodeExecutor`'s
 * `maxCodeBytes`. Upstream has no cap of its own (a 20 MB program runs under wrangler dev), so ours
 * only stays under the default request cap (`limits.maxRequestBytes`, 16 MiB), leaving 1 MiB of
 * it for the modules and the start message. A 15 MB literal costs ours half a second, parse included.
 */
export const DEFAULT_MAX_CODE_BYTES = 15 * 2 ** 20;

/**
 * The UTF-8 size of `code` when it is over `cap` bytes, or null. A UTF-16 unit is at most three
 * bytes, so most programs are judged by their length alone; a longer one is a byte a unit when it
 * is all ASCII (one scan, measured 5 ms for 15 MiB), else encoded once to count it.
 */
export function codeBytesOver(code: string, cap: number): number | null {
  if (code.length * 3 <= cap) return null;
  const bytes = utf8Bytes(code);
  return bytes > cap ? bytes : null;
}
