/**
 * The value codec of the executor connection. capnweb throws on a `Map`, a `Set`, a `RegExp` and a
 * class instance, turns `-0` into `0`, delivers a `Uint8Array` as a `Buffer` on Node, and would turn
 * a function into a live stub. So the daemon encodes an execution's result (and the client a handle
 * call's arguments) into plain data, and the other end decodes it.
 *
 * Both ends share this module, and it is the codec IsolateExecutor already uses between the host and
 * its sandbox (`src/isolate/value-codec.ts`, self-contained and free of runtime-specific APIs), so
 * a result crosses the wire exactly as it crosses into the host in process: undefined, NaN, -0,
 * BigInt, Date, RegExp, Map, Set, binary data, errors, boxed primitives, holes, shared and cyclic
 * references. A function becomes, as in process, one that rejects with `HANDLE_NOT_FOUND`.
 */
import { isolateText } from '../isolate/messages.js';
import { createValueCodec } from '../isolate/value-codec.js';
import { ExecutorError } from '../protocol/errors.js';

const codec = createValueCodec(
  () => () => Promise.reject(new ExecutorError('HANDLE_NOT_FOUND', isolateText.functionNotRetained)),
);

export function encodeValue(value: unknown): unknown {
  return codec.encode(value);
}

export function decodeValue(encoded: unknown): unknown {
  return codec.decode(encoded);
}
