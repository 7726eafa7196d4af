/**
 * An execution's result on the wire: `ExecuteResult` with its value in the protocol's value codec,
 * because capnweb cannot carry a `Map`, a `Set`, a `RegExp` or `-0`, and on Node turns a
 * `Uint8Array` into a `Buffer`. The daemon encodes, the client decodes. How the run ended
 * (`ending`) is plain data, and crosses as it is.
 */
import type { ExecuteResult } from '../protocol/types.js';
import { decodeValue, encodeValue } from '../protocol/value-codec.js';
import type { WireExecuteResult } from './types.js';

export function resultFromWire(wire: WireExecuteResult): ExecuteResult {
  const result: ExecuteResult = { logs: wire.logs };
  if (wire.result !== undefined) result.result = decodeValue(wire.result);
  if (wire.error !== undefined) result.error = wire.error;
  if (wire.ending !== undefined) result.ending = wire.ending;
  if (wire.executionId !== undefined) result.executionId = wire.executionId;
  return result;
}

export function resultToWire(result: ExecuteResult): WireExecuteResult {
  const wire: WireExecuteResult = { logs: result.logs };
  if (result.result !== undefined) wire.result = encodeValue(result.result);
  if (result.error !== undefined) wire.error = result.error;
  if (result.ending !== undefined) wire.ending = result.ending;
  if (result.executionId !== undefined) wire.executionId = result.executionId;
  return wire;
}
