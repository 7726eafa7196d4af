/**
 * A capnweb `RpcTransport` over a WebSocket the caller's injected constructor built (for instance
 * the ws package's). capnweb's own `WebSocketTransport` reads the global `WebSocket` to compare
 * `readyState`, which Node 20 lacks, so an injected socket goes through this one instead. It uses
 * only the standard WebSocket surface: `readyState`, `send`, `close`, `addEventListener`.
 */
import type { RpcTransport } from 'capnweb';
import { messageOf } from '../protocol/message-of.js';
import { InboundQueue, truncateCloseReason } from '../wire/inbound-queue.js';
import { formatPeerClosed, formatSocketFailed } from '../wire/texts.js';
import { UNEXPECTED_MESSAGE_TYPE } from './texts.js';
import type { WebSocketLike } from './websocket-types.js';

const CONNECTING = 0;

export class SocketTransport implements RpcTransport {
  readonly #socket: WebSocketLike;
  #sendQueue: string[] | undefined;
  readonly #inbound = new InboundQueue();

  constructor(socket: WebSocketLike) {
    this.#socket = socket;
    socket.binaryType = 'arraybuffer';
    if (socket.readyState === CONNECTING) {
      this.#sendQueue = [];
      socket.addEventListener('open', () => {
        const queued = this.#sendQueue ?? [];
        this.#sendQueue = undefined;
        try {
          for (const message of queued) socket.send(message);
        } catch (error) {
          this.#inbound.fail(error);
        }
      });
    }
    socket.addEventListener('message', (event: { data: unknown }) => {
      if (typeof event.data === 'string') this.#inbound.deliver(event.data);
      else this.#inbound.fail(new TypeError(UNEXPECTED_MESSAGE_TYPE));
    });
    socket.addEventListener('close', (event: { code: number; reason: string }) => {
      this.#inbound.fail(new Error(formatPeerClosed(event.code, event.reason)));
    });
    socket.addEventListener('error', (event: { message?: unknown }) => {
      this.#inbound.fail(new Error(formatSocketFailed(typeof event.message === 'string' ? event.message : undefined)));
    });
  }

  send(message: string): void {
    if (this.#sendQueue) this.#sendQueue.push(message);
    else this.#socket.send(message);
  }

  receive(): Promise<string> {
    return this.#inbound.receive();
  }

  abort(reason: unknown): void {
    this.#inbound.abort(reason);
    try {
      this.#socket.close(3000, truncateCloseReason(messageOf(reason)));
    } catch {
      // The socket is already closing; nothing more to release.
    }
  }
}
