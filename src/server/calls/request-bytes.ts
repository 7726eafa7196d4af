/**
 * What a request holds in the daemon while it waits and runs: the bytes of its strings (UTF-8, as
 * they crossed the wire) and binary data, its keys included, so code, modules, providers and
 * encoded arguments all count. Functions are stubs of the client's and hold nothing here.
 */

/** A number, a boolean, a null: what one such value counts for. */
const SCALAR_BYTES = 8;

/** The bytes `value` holds: every string and byte array in it, with the keys that name them. */
export function heldBytesOf(value: unknown): number {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') bytes += Buffer.byteLength(next, 'utf8');
    else if (typeof next === 'function' || next === undefined) continue;
    else if (typeof next !== 'object' || next === null) bytes += SCALAR_BYTES;
    else if (ArrayBuffer.isView(next)) bytes += next.byteLength;
    else if (Array.isArray(next)) for (const item of next) pending.push(item);
    else
      for (const [key, item] of Object.entries(next)) {
        bytes += key.length;
        pending.push(item);
      }
  }
  return bytes;
}
