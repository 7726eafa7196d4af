/**
 * One capnweb WebSocket session to the daemon: open and version handshake, the broken flag, the
 * running-call count behind safe rotation, and the heartbeat that watches calls in flight.
 */
import { newWebSocketRpcSession, RpcSession } from 'capnweb';
import { ExecutorError } from '../protocol/errors.js';
import { messageOf } from '../protocol/message-of.js';
import { assertProtocolCompatible } from '../protocol/version.js';
import { UPGRADE_REFUSAL_STATUS } from '../wire/refusals.js';
import type { ExecutorEndpoint } from '../wire/types.js';
import { Heartbeat } from './heartbeat.js';
import { SocketTransport } from './socket-transport.js';
import {
  EXECUTOR_CLOSED,
  formatHandshakeFailed,
  formatHandshakeTimeout,
  formatHeadersNeedWebSocket,
  formatNoGlobalWebSocket,
  formatNotTakingSessions,
  formatOpenFailed,
  formatTokenMissing,
  formatTokenWrong,
} from './texts.js';
import type { WebSocketConstructor } from './websocket-types.js';

export interface SessionOptions {
  websocket?: WebSocketConstructor | undefined;
  headers?: Record<string, string> | undefined;
  /** Milliseconds the version handshake may take. */
  handshakeTimeout: number;
  heartbeatInterval: number;
  heartbeatTimeout: number;
  /** Told once when the session is disposed, so its owner can forget it. */
  onDispose?: ((session: Session) => void) | undefined;
}

type Promisified<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/** The daemon's endpoint as the client's stub exposes it. */
export type RemoteEndpoint = Promisified<ExecutorEndpoint> & {
  onRpcBroken(callback: (error: unknown) => void): void;
  [Symbol.dispose](): void;
};

export class Session {
  readonly remote: RemoteEndpoint;
  #broken = false;
  #running = 0;
  #retired = false;
  #disposed = false;
  readonly #heartbeat: Heartbeat;
  readonly #onDispose: ((session: Session) => void) | undefined;

  private constructor(remote: RemoteEndpoint, options: SessionOptions) {
    this.remote = remote;
    this.#onDispose = options.onDispose;
    this.#heartbeat = new Heartbeat({
      interval: options.heartbeatInterval,
      timeout: options.heartbeatTimeout,
      ping: () => remote.heartbeat(),
      onDead: () => {
        // Disposing the stub rejects every call in flight at once; the flag makes them CONNECTION_BROKEN.
        this.#markBroken();
        this.#disposeStub();
      },
    });
    remote.onRpcBroken(() => this.#markBroken());
  }

  /**
   * Opens a session and runs the version handshake before anything else crosses. A mismatch throws
   * `PROTOCOL_MISMATCH`; every other failure `CONNECTION_REJECTED`. An abort (the executor's
   * dispose) ends a pending open with `CONNECTION_BROKEN`.
   */
  static async open(url: string, options: SessionOptions, signal?: AbortSignal): Promise<Session> {
    if (options.headers !== undefined && options.websocket === undefined) {
      throw new ExecutorError('CONNECTION_REJECTED', formatHeadersNeedWebSocket(['headers']));
    }
    // capnweb would throw a bare ReferenceError; say what to pass instead.
    if (options.websocket === undefined && typeof globalThis.WebSocket !== 'function') {
      throw new ExecutorError('CONNECTION_REJECTED', formatNoGlobalWebSocket(url));
    }
    let session: Session;
    try {
      session = new Session(createStub(url, options), options);
    } catch (error) {
      throw new ExecutorError('CONNECTION_REJECTED', formatOpenFailed(url), { cause: error });
    }
    try {
      const version = await session.#handshake(url, options.handshakeTimeout, signal);
      assertProtocolCompatible(version);
      return session;
    } catch (error) {
      session.dispose();
      if (error instanceof ExecutorError) throw error;
      throw refusalError(url, error);
    }
  }

  get broken(): boolean {
    return this.#broken;
  }

  get running(): number {
    return this.#running;
  }

  /** Raises the running count before a call. */
  start(): void {
    this.#running += 1;
    if (this.#running === 1 && !this.#broken) this.#heartbeat.start();
  }

  /** Lowers it after the call; a retired session is disposed with its last call. */
  settle(): void {
    this.#running -= 1;
    if (this.#running > 0) return;
    this.#heartbeat.stop();
    if (this.#retired) this.dispose();
  }

  /** Marks the session for disposal once no call is running on it. */
  retire(): void {
    this.#retired = true;
    if (this.#running === 0) this.dispose();
  }

  /**
   * Asks the daemon to abort the call that carried `cancelToken`, fire-and-forget: the caller's
   * call has already rejected, and a failure here (the connection may be gone) changes nothing.
   */
  cancel(cancelToken: string): void {
    try {
      Promise.resolve(this.remote.cancel(cancelToken)).catch(() => {});
    } catch {
      // The stub is disposed: the daemon has ended the call with the connection.
    }
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#heartbeat.stop();
    this.#disposeStub();
    this.#onDispose?.(this);
  }

  #markBroken(): void {
    this.#broken = true;
    this.#heartbeat.stop();
  }

  #disposeStub(): void {
    try {
      this.remote[Symbol.dispose]();
    } catch {
      // Already disposed.
    }
  }

  #handshake(url: string, timeout: number, signal: AbortSignal | undefined): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        finish();
        reject(new ExecutorError('CONNECTION_REJECTED', formatHandshakeTimeout(url, timeout)));
      }, timeout);
      const onAbort = (): void => {
        finish();
        reject(new ExecutorError('CONNECTION_BROKEN', EXECUTOR_CLOSED, { retryable: false }));
      };
      const finish = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort);
      this.remote.protocolVersion().then(
        (version) => {
          finish();
          resolve(version);
        },
        (error: unknown) => {
          finish();
          reject(error);
        },
      );
    });
  }
}

/** ws words a refused upgrade `Unexpected server response: <status>`; other runtimes say less. */
const REFUSED_STATUS = /Unexpected server response: (\d{3})/;

/** A failed open as the text that says what to do: the daemon's refusal statuses get texts of their own. */
function refusalError(url: string, error: unknown): ExecutorError {
  const reason = messageOf(error);
  const status = Number(REFUSED_STATUS.exec(reason)?.[1]);
  const options = { cause: error };
  if (status === UPGRADE_REFUSAL_STATUS.tokenMissing)
    return new ExecutorError('CONNECTION_REJECTED', formatTokenMissing(url), options);
  if (status === UPGRADE_REFUSAL_STATUS.tokenWrong)
    return new ExecutorError('CONNECTION_REJECTED', formatTokenWrong(url), options);
  if (status === UPGRADE_REFUSAL_STATUS.notTakingSessions) {
    return new ExecutorError('CONNECTION_REJECTED', formatNotTakingSessions(url), { ...options, retryable: true });
  }
  return new ExecutorError('CONNECTION_REJECTED', formatHandshakeFailed(url, reason), options);
}

/** A refusal another daemon behind the same address may not give. */
export function isNotTakingSessions(error: unknown): boolean {
  return error instanceof ExecutorError && error.code === 'CONNECTION_REJECTED' && error.retryable;
}

function createStub(url: string, options: SessionOptions): RemoteEndpoint {
  // No `localMain`: the client exports nothing but the stubs its calls pass.
  if (options.websocket === undefined) return newWebSocketRpcSession(url) as unknown as RemoteEndpoint;
  const socket =
    options.headers === undefined
      ? new options.websocket(url)
      : new options.websocket(url, { headers: options.headers });
  return new RpcSession(new SocketTransport(socket)).getRemoteMain() as unknown as RemoteEndpoint;
}
