/**
 * A capnweb `RpcTransport` over a `ws` socket. capnweb's `WebSocketTransport` reads the global
 * `WebSocket`, which Node 20 lacks, so the daemon sets nothing global and uses this instead.
 * Incoming messages over `maxMessageBytes` are replaced by ones that fail alone (oversize.ts);
 * a client whose unsent bytes pass `maxSendBufferBytes` (it stopped reading) is reported to `hooks`, and so
 * is a message or a session table the guard refuses (rpc-bounds.ts). While many messages wait for
 * the session, the socket is not read: the queue between ws and capnweb stays short.
 */
import type { RpcTransport } from 'capnweb';
import type { RawData, WebSocket } from 'ws';
import { messageOf } from '../../protocol/message-of.js';
import { InboundQueue, truncateCloseReason } from '../../wire/inbound-queue.js';
import { formatPeerClosed, formatSocketFailed } from '../../wire/texts.js';
import { BINARY_MESSAGE, formatMessageTooLarge } from '../texts.js';
import { substituteOversizedMessage } from './oversize.js';
import type { RpcGuard, RpcViolation } from './rpc-bounds.js';

/** RFC 6455: the message is too big to process. */
const MESSAGE_TOO_BIG = 1009;
/** Messages waiting for the session at which the socket stops being read, and at which it is read again. */
const PAUSE_AT_QUEUED = 256;
const RESUME_AT_QUEUED = 16;

function toText(data: RawData): { text: string; size: number } {
  const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  return { text: buffer.toString('utf8'), size: buffer.byteLength };
}

/** What the transport tells its connection. */
export interface TransportHooks {
  /** Every incoming message, with its size: the client is alive. */
  received(bytes: number): void;
  sent(bytes: number): void;
  /** The socket's unsent bytes passed `maxSendBufferBytes`. Called once. */
  overflowed(buffered: number): void;
  /** The guard refused a message or a session table; nothing more is read. Called once. */
  violated(violation: RpcViolation): void;
}

export interface TransportLimits {
  maxMessageBytes: number;
  maxSendBufferBytes: number;
}

export class WsTransport implements RpcTransport {
  readonly #socket: WebSocket;
  readonly #maxMessageBytes: number;
  readonly #maxSendBufferBytes: number;
  readonly #hooks: TransportHooks;
  readonly #inbound = new InboundQueue();
  readonly #guard: RpcGuard;
  #overflowed = false;
  #paused = false;

  constructor(socket: WebSocket, limits: TransportLimits, guard: RpcGuard, hooks: TransportHooks) {
    this.#socket = socket;
    this.#guard = guard;
    this.#maxMessageBytes = limits.maxMessageBytes;
    this.#maxSendBufferBytes = limits.maxSendBufferBytes;
    this.#hooks = hooks;
    socket.on('message', (data, isBinary) => this.#receive(data, isBinary));
    socket.on('close', (code, reason) =>
      this.#inbound.fail(new Error(formatPeerClosed(code, reason.toString('utf8')))),
    );
    socket.on('error', (error) => this.#inbound.fail(new Error(formatSocketFailed(error.message))));
  }

  send(message: string): void {
    if (this.#overflowed || this.#socket.readyState !== this.#socket.OPEN) return;
    this.#socket.send(message);
    this.#hooks.sent(Buffer.byteLength(message));
    // Unsent bytes pile up in this process when the client stops reading; past the bound it goes.
    const buffered = this.#socket.bufferedAmount;
    if (buffered > this.#maxSendBufferBytes) {
      this.#overflowed = true;
      this.#hooks.overflowed(buffered);
    }
  }

  receive(): Promise<string> {
    if (this.#inbound.error === undefined) {
      const violation = this.#guard.due();
      if (violation !== undefined) this.#violated(violation);
    }
    if (this.#paused && this.#inbound.length <= RESUME_AT_QUEUED) {
      this.#paused = false;
      this.#socket.resume();
    }
    return this.#inbound.receive();
  }

  abort(reason: unknown): void {
    this.#inbound.abort(reason);
    this.#socket.close(3000, truncateCloseReason(messageOf(reason)));
  }

  #receive(data: RawData, isBinary: boolean): void {
    if (this.#inbound.error !== undefined) return;
    const { text, size } = toText(data);
    this.#hooks.received(size);
    if (isBinary) {
      this.#inbound.fail(new TypeError(BINARY_MESSAGE));
      return;
    }
    if (size <= this.#maxMessageBytes) {
      const violation = this.#guard.admit(text, size);
      if (violation !== undefined) {
        this.#violated(violation);
        return;
      }
      this.#inbound.deliver(text);
      if (!this.#paused && this.#inbound.length >= PAUSE_AT_QUEUED) {
        this.#paused = true;
        this.#socket.pause();
      }
      return;
    }
    const substitute = substituteOversizedMessage(text, size, this.#maxMessageBytes);
    if (substitute !== undefined) {
      this.#guard.admit(substitute, substitute.length);
      this.#inbound.deliver(substitute);
      return;
    }
    const reason = formatMessageTooLarge(size, this.#maxMessageBytes);
    this.#inbound.fail(new Error(reason));
    this.#socket.close(MESSAGE_TOO_BIG, truncateCloseReason(reason));
  }

  #violated(violation: RpcViolation): void {
    this.#inbound.fail(new Error(violation.reason));
    this.#hooks.violated(violation);
  }
}
