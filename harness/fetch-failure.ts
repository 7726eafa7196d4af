import { messageOf } from '../src/protocol/index.js';

/**
 * What a failed `fetch` says, with its cause: undici's own message is "fetch failed" whatever
 * happened, and the cause (a closed socket, a refused connection, its code) is what tells a crash
 * of the other side from a refused port.
 */
export function fetchFailure(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause === undefined) return messageOf(error);
  const code = (cause as { code?: unknown }).code;
  return `${messageOf(error)}: ${messageOf(cause)}${typeof code === 'string' ? ` (${code})` : ''}`;
}
