/** The life of one client socket on the daemon's side: liveness pings, and a bounded close. */
import type { WebSocket } from 'ws';
import { SOCKET_CLOSED_ON_STOP } from '../texts.js';

/** How long a closing client may take to answer the close frame before its socket is cut. */
const CLOSE_GRACE_MS = 1000;

/** Drops a client that misses a pong: a frozen or vanished peer never closes its socket. */
export function watchLiveness(ws: WebSocket, interval: number, onMissed: () => void): void {
  let alive = true;
  ws.on('pong', () => (alive = true));
  const timer = setInterval(() => {
    if (!alive) {
      onMissed();
      return ws.terminate();
    }
    alive = false;
    ws.ping();
  }, interval);
  timer.unref();
  ws.on('close', () => clearInterval(timer));
}

/** RFC 6455: the endpoint is going away (the daemon stops). */
const GOING_AWAY = 1001;

/**
 * Closes a client's socket with a close frame, and cuts it if the client does not answer within
 * the grace. By default the daemon is stopping; a drop passes its own code and reason.
 */
export function closeSocket(ws: WebSocket, code = GOING_AWAY, reason = SOCKET_CLOSED_ON_STOP): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === ws.CLOSED) return resolve();
    ws.once('close', () => resolve());
    ws.close(code, reason);
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  });
}
