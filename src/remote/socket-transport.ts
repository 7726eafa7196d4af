/**
 * A capnweb `RpcTransport` over a WebSocket the caller's injected constructor built (for instance
 * the ws package's). capnweb's own `WebSocketTransport` reads the global `WebSocket` to compare
 * `readyState`, which Node 20 lacks, so an injected socket goes through this one instead. It uses
 * only the standard WebSocket surface: `readyState`, `send`, `close`, `addEventListener`.
 */
import type { RpcTransport } from 'capnweb';
import type { WebSocketLike } from './websocket-types.js';
import { formatPeerClosed, formatSocketFailed, UNEXPECTED_MESSAGE_TYPE } from './texts.js';

const CONNECTING = 0;
/** WebSocket close reasons are limited to 123 bytes. */
const MAX_REASON_BYTES = 123;

export class SocketTransport implements RpcTransport {
  readonly #socket: WebSocketLike;
  #sendQueue: string[] | undefined;
  readonly #receiveQueue: string[] = [];
  #waiter: { resolve(message: string): void; reject(error: unknown): void } | undefined;
  #error: unknown;

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
          this.#fail(error);
        }
      });
    }
    socket.addEventListener('message', (event: { data: unknown }) => {
      if (typeof event.data === 'string') this.#deliver(event.data);
      else this.#fail(new TypeError(UNEXPECTED_MESSAGE_TYPE));
    });
    socket.addEventListener('close', (event: { code: number; reason: string }) => {
      this.#fail(new Error(formatPeerClosed(event.code, event.reason)));
    });
    socket.addEventListener('error', (event: { message?: unknown }) => {
      this.#fail(new Error(formatSocketFailed(typeof event.message === 'string' ? event.message : undefined)));
    });
  }

  send(message: string): void {
    if (this.#sendQueue) this.#sendQueue.push(message);
    else this.#socket.send(message);
  }

  receive(): Promise<string> {
    const next = this.#receiveQueue.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  abort(reason: unknown): void {
    if (this.#error === undefined) this.#error = reason;
    try {
      this.#socket.close(3000, truncateReason(reason instanceof Error ? reason.message : String(reason)));
    } catch {
      // The socket is already closing; nothing more to release.
    }
  }

  #deliver(message: string): void {
    if (this.#error !== undefined) return;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter.resolve(message);
    else this.#receiveQueue.push(message);
  }

  #fail(error: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }
}

function truncateReason(reason: string): string {
  const bytes = new TextEncoder().encode(reason);
  if (bytes.length <= MAX_REASON_BYTES) return reason;
  return new TextDecoder().decode(bytes.subarray(0, MAX_REASON_BYTES)).replace(/\uFFFD$/, '');
}
