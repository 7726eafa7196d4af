/**
 * A capnweb session to the daemon with no RemoteExecutor in between, for tests that send what
 * connect() never would (a null request, a forged call) or that stop reading their socket.
 */
import { RpcSession } from 'capnweb';
import { WebSocket } from 'ws';
import { SocketTransport } from '../../src/remote/socket-transport.js';
import type { WebSocketLike } from '../../src/remote/websocket-types.js';

/** The daemon's endpoint as an untyped stub: every method takes anything. */
type RawEndpoint = Record<string, (...args: unknown[]) => Promise<unknown>> & { [Symbol.dispose](): void };

export interface RawSession {
  remote: RawEndpoint;
  socket: WebSocket;
  close(): void;
}

export async function openRawSession(url: string, options: { localAddress?: string } = {}): Promise<RawSession> {
  const socket = new WebSocket(url, options);
  const remote = new RpcSession(
    new SocketTransport(socket as unknown as WebSocketLike),
  ).getRemoteMain() as unknown as RawEndpoint;
  await remote.protocolVersion!();
  return {
    remote,
    socket,
    close() {
      try {
        remote[Symbol.dispose]();
      } catch {
        // Already gone.
      }
      socket.terminate();
    },
  };
}
