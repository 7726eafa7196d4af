/**
 * Retained executions across a fleet. The id a client gets names the daemon that holds the
 * execution (`<executor's id>@<daemon id>`), so a handle call that a load balancer sent to another
 * daemon fails with a text that says where the execution lives instead of a bare "not found".
 */
import { ExecutorError } from '../../protocol/errors.js';
import { formatHandleElsewhere } from '../texts.js';

const SEPARATOR = '@';

/** A daemon id must not hold the separator, so the last one always splits an id. */
export function isValidDaemonId(daemonId: string): boolean {
  return daemonId !== '' && !daemonId.includes(SEPARATOR) && !/[\s\p{Cc}]/u.test(daemonId);
}

export function toWireExecutionId(executionId: string, daemonId: string): string {
  return `${executionId}${SEPARATOR}${daemonId}`;
}

/**
 * The executor's own id for a wire id. An id that names another daemon is `HANDLE_NOT_FOUND` with
 * the text that says so; an id without a daemon passes through, for the executor to judge.
 */
export function fromWireExecutionId(wireId: string, daemonId: string): string {
  const at = wireId.lastIndexOf(SEPARATOR);
  if (at < 0) return wireId;
  const owner = wireId.slice(at + 1);
  if (owner !== daemonId) throw new ExecutorError('HANDLE_NOT_FOUND', formatHandleElsewhere(wireId, owner, daemonId));
  return wireId.slice(0, at);
}
