/**
 * The value codec of the executor connection. capnweb throws on a `Map`, a `Set`, a `RegExp` and a
 * class instance, turns `-0` into `0`, delivers a `Uint8Array` as a `Buffer` on Node, and would turn
 * a function into a live stub. So the daemon encodes an execution's result (and the client a handle
 * call's arguments) into plain data, and the other end decodes it.
 *
 * It is the protocol's value codec (`src/protocol/value-codec.ts`), the one IsolateExecutor already
 * uses between the host and its sandbox, so a result crosses the wire exactly as it crosses into
 * the host in process. A function becomes, as in process, one that rejects with `HANDLE_NOT_FOUND`.
 */
export { decodeValue, encodeValue } from '../protocol/value-codec.js';
