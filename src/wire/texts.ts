/**
 * The texts both ends of the executor connection compose: the transport's failure texts, worded as
 * capnweb's own WebSocket transport words them so both of our transports read alike, the
 * outbound conversion's refusal, and the draining daemon's refusal the client recognizes.
 */

export function formatPeerClosed(code: number, reason: string): string {
  return `Peer closed WebSocket: ${code} ${reason}`;
}

export function formatSocketFailed(detail: string | undefined): string {
  return detail ? `WebSocket connection failed: ${detail}` : 'WebSocket connection failed.';
}

export function formatOutboundStatus(status: number): string {
  return `The outbound function returned a Response with status ${status}, which cannot cross the executor connection`;
}

/**
 * What an execution (or handle call) sent to a draining daemon is refused with, before it runs.
 * The client knows the refusal by this exact text (with `EXECUTOR_DISPOSED`): a reword is a
 * change of the wire.
 */
export const DRAINING_REFUSAL = 'The executor daemon is shutting down and accepts no new executions';
