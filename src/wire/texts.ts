/**
 * The texts both ends of the executor connection compose: the transport's failure texts, worded as
 * capnweb's own WebSocket transport words them so both of our transports read alike, and the
 * outbound conversion's refusal.
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
