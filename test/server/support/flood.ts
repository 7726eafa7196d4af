/**
 * A raw WebSocket to the daemon that sends capnweb messages as text, as an attacker would, and a
 * bounded flood of them: at most `count` messages and `timeLimit` ms, stopping when the daemon
 * closes the socket.
 */
import { once } from 'node:events';
import { WebSocket } from 'ws';

export interface Flood {
  sent: number;
  closed: boolean;
  closeCode: number | undefined;
}

export async function openRawSocket(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url);
  socket.on('error', () => {});
  await once(socket, 'open');
  return socket;
}

/** Sends `message(i)` up to `count` times, in batches, waiting for the socket's buffer to drain between them. */
export async function flood(
  socket: WebSocket,
  message: (i: number) => string,
  count: number,
  timeLimit: number,
): Promise<Flood> {
  const result: Flood = { sent: 0, closed: false, closeCode: undefined };
  socket.once('close', (code) => {
    result.closed = true;
    result.closeCode = code;
  });
  const deadline = performance.now() + timeLimit;
  while (result.sent < count && !result.closed && performance.now() < deadline) {
    const batch = Math.min(1000, count - result.sent);
    for (let i = 0; i < batch && socket.readyState === socket.OPEN; i++) {
      socket.send(message(result.sent));
      result.sent += 1;
    }
    while (socket.bufferedAmount > 1 << 20 && !result.closed && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

/** Waits up to `timeout` ms for the socket to close; true when it did. */
export async function closedWithin(socket: WebSocket, timeout: number): Promise<boolean> {
  if (socket.readyState === socket.CLOSED) return true;
  const timer = new Promise<false>((resolve) => setTimeout(() => resolve(false), timeout).unref());
  return Promise.race([once(socket, 'close').then(() => true), timer]);
}
