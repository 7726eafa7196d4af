/**
 * What becomes of a capnweb message larger than the daemon's `maxMessageBytes`. Rather than
 * aborting the whole session (capnweb's own limit does that), the message is replaced by one of the
 * same kind that fails alone: a call (`push`) becomes a call of `rejectOversizedMessage`, which
 * throws `LIMIT_EXCEEDED`, and a reply (`resolve`) becomes a `reject` of the same export. Import
 * numbering stays intact because a push is still a push. Any other kind gets `undefined`: the caller
 * closes the socket.
 */
import { serialize } from 'capnweb';
import { ExecutorError } from '../../protocol/errors.js';
import { formatMessageTooLarge } from '../texts.js';

/** The endpoint method a replaced call invokes; it throws `LIMIT_EXCEEDED`. */
const REJECT_OVERSIZED_METHOD = 'rejectOversizedMessage';

/** capnweb's main export is id 0 on both ends. */
const MAIN_EXPORT = 0;

const HEAD = /^\s*\[\s*"(push|stream|resolve|reject)"\s*,\s*(-?\d+)?/;

export function oversizedMessageError(size: number, limit: number): ExecutorError {
  return new ExecutorError('LIMIT_EXCEEDED', formatMessageTooLarge(size, limit));
}

export function substituteOversizedMessage(message: string, size: number, limit: number): string | undefined {
  const head = HEAD.exec(message.slice(0, 64));
  if (!head) return undefined;
  const [, kind, id] = head;
  if (kind === 'push' || kind === 'stream') {
    return JSON.stringify([kind, ['pipeline', MAIN_EXPORT, [REJECT_OVERSIZED_METHOD], [size, limit]]]);
  }
  if (id === undefined) return undefined;
  const error: unknown = JSON.parse(serialize(oversizedMessageError(size, limit)));
  return JSON.stringify(['reject', Number(id), error]);
}
