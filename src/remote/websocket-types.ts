/**
 * The WebSocket shapes the client accepts. They live apart from the transport so the public
 * declarations never reach capnweb's own (which do not type-check without skipLibCheck).
 *
 * Each event the transport listens for has its own `addEventListener` overload, typed with the
 * fields it reads. That is what lets the ws package's `WebSocket`, as `@types/ws` types it (one
 * generic `addEventListener` over its own event map, an overloaded constructor), be passed with
 * no cast: a single signature with a bare `string` event name would refuse it.
 */

/** What the transport reads from a `message` event. */
interface WebSocketMessageEventLike {
  readonly data: unknown;
}

/** What the transport reads from a `close` event. */
interface WebSocketCloseEventLike {
  readonly code: number;
  readonly reason: string;
}

/** What the transport reads from an `error` event: ws sets `message`, the standard event has none. */
interface WebSocketErrorEventLike {
  readonly message?: unknown;
}

/** The standard WebSocket surface this transport uses. */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: WebSocketMessageEventLike) => void): void;
  addEventListener(type: 'close', listener: (event: WebSocketCloseEventLike) => void): void;
  addEventListener(type: 'error', listener: (event: WebSocketErrorEventLike) => void): void;
}

/** A constructor that can send handshake headers, such as the ws package's `WebSocket`. */
export type WebSocketConstructor = new (url: string, options?: { headers?: Record<string, string> }) => WebSocketLike;
