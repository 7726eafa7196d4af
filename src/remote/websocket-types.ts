/**
 * The WebSocket shapes the client accepts. They live apart from the transport so the public
 * declarations never reach capnweb's own (which do not type-check without skipLibCheck).
 */

/** The standard WebSocket surface this transport uses. */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: never) => void): void;
}

/** A constructor that can send handshake headers, such as the ws package's `WebSocket`. */
export type WebSocketConstructor = new (url: string, options?: { headers?: Record<string, string> }) => WebSocketLike;
