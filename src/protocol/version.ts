/** The version of the native executor protocol that crosses a wire. Bumped on any incompatible change. */
import { ExecutorError } from './errors.js';
import { formatProtocolMismatch } from './texts.js';

export const PROTOCOL_VERSION = 1;

/** Exact equality; anything else throws `PROTOCOL_MISMATCH`. */
export function assertProtocolCompatible(serverVersion: unknown, clientVersion: number = PROTOCOL_VERSION): void {
  if (serverVersion !== clientVersion) {
    throw new ExecutorError('PROTOCOL_MISMATCH', formatProtocolMismatch(clientVersion, serverVersion));
  }
}
