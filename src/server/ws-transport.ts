/**
 * A capnweb `RpcTransport` over a `ws` socket. capnweb's `WebSocketTransport` reads the global
 * `WebSocket`, which Node 20 lacks, so the daemon sets nothing global and uses this instead.
 * Incoming messages over `maxMessageSize` bytes are replaced by ones that fail alone (oversize.ts).
 */
import type { RpcTransport } from 'capnweb';
import type { RawData, WebSocket } from 'ws';
import { formatPeerClosed, formatSocketFailed } from '../remote/texts.js';
import { substituteOversizedMessage } from './oversize.js';
import { BINARY_MESSAGE, formatMessageTooLarge } from './texts.js';

/** RFC 6455: the message is too big to process. */
const MESSAGE_TOO_BIG = 1009;
const MAX_REASON_BYTES = 123;

function toText(data: RawData): { text: string; size: number } {
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  return { text: buffer.toString('utf8'), size: buffer.byteLength };
}

export class WsTransport implements RpcTransport {
  readonly #socket: WebSocket;
  readonly #maxMessageSize: number;
  readonly #queue: string[] = [];
  #waiter: { resolve(message: string): void; reject(error: unknown): void } | undefined;
  #error: unknown;

  constructor(socket: WebSocket, maxMessageSize: number) {
    this.#socket = socket;
    this.#maxMessageSize = maxMessageSize;
    socket.on('message', (data, isBinary) => this.#receive(data, isBinary));
    socket.on('close', (code, reason) => this.#fail(new Error(formatPeerClosed(code, reason.toString('utf8')))));
    socket.on('error', (error) => this.#fail(new Error(formatSocketFailed(error.message))));
  }

  send(message: string): void {
    if (this.#socket.readyState === this.#socket.OPEN) this.#socket.send(message);
  }

  receive(): Promise<string> {
    const next = this.#queue.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  abort(reason: unknown): void {
    if (this.#error === undefined) this.#error = reason;
    const text = reason instanceof Error ? reason.message : String(reason);
    this.#socket.close(3000, Buffer.from(text).subarray(0, MAX_REASON_BYTES).toString('utf8').replace(/\uFFFD$/, ''));
  }

  #receive(data: RawData, isBinary: boolean): void {
    if (this.#error !== undefined) return;
    const { text, size } = toText(data);
    if (isBinary) return this.#fail(new TypeError(BINARY_MESSAGE));
    if (size <= this.#maxMessageSize) return this.#deliver(text);
    const substitute = substituteOversizedMessage(text, size, this.#maxMessageSize);
    if (substitute !== undefined) return this.#deliver(substitute);
    const reason = formatMessageTooLarge(size, this.#maxMessageSize);
    this.#fail(new Error(reason));
    this.#socket.close(MESSAGE_TOO_BIG, Buffer.from(reason).subarray(0, MAX_REASON_BYTES).toString('utf8'));
  }

  #deliver(message: string): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter.resolve(message);
    else this.#queue.push(message);
  }

  #fail(error: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }
}
