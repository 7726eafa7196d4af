/**
 * The size of a program, counted before anything reads it, so a huge one costs its count and no
 * parse. Runtime-neutral (no Buffer): the dialect adapter in the root entry counts with it too.
 */

/** The default cap on a request's code, in UTF-8 bytes: `limits.maxCodeBytes` and `CodemodeExecutor`'s `maxCodeBytes`. */
export const DEFAULT_MAX_CODE_BYTES = 2 ** 20;

/**
 * The UTF-8 size of `code` when it is over `cap` bytes, or null. A UTF-16 unit is at most three
 * bytes, so most programs are judged by their length alone; a longer one is counted without
 * encoding it.
 */
export function codeBytesOver(code: string, cap: number): number | null {
  if (code.length * 3 <= cap) return null;
  let bytes = code.length;
  for (let i = 0; i < code.length; i++) {
    const unit = code.charCodeAt(i);
    // One more byte below 0x800, two more above; a surrogate pair is four bytes, two a unit.
    if (unit >= 0x80) bytes += unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 1 : 2;
  }
  return bytes > cap ? bytes : null;
}
