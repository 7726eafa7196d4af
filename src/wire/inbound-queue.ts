/**
 * The receiving half every capnweb transport of ours shares: messages wait in order until
 * `receive()` asks, and the first failure rejects the waiting call and every later one.
 * Runtime-neutral.
 */
export class InboundQueue {
  readonly #messages: string[] = [];
  #waiter: { resolve(message: string): void; reject(error: unknown): void } | undefined;
  #error: unknown;

  /** Messages waiting for `receive()`. */
  get length(): number {
    return this.#messages.length;
  }

  /** The first failure, or undefined while the transport is healthy. */
  get error(): unknown {
    return this.#error;
  }

  deliver(message: string): void {
    if (this.#error !== undefined) return;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter.resolve(message);
    else this.#messages.push(message);
  }

  /** Records the first failure; later ones are ignored. */
  fail(error: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }

  /**
   * Our own side ended the transport (capnweb's `abort`): later receives reject, but a receive
   * already waiting is left to the session that is tearing itself down.
   */
  abort(reason: unknown): void {
    if (this.#error === undefined) this.#error = reason;
  }

  receive(): Promise<string> {
    const next = this.#messages.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.#error !== undefined) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }
}

/** WebSocket close reasons are limited to 123 bytes; a cut never splits a character. */
const MAX_REASON_BYTES = 123;

export function truncateCloseReason(reason: string): string {
  const bytes = new TextEncoder().encode(reason);
  if (bytes.length <= MAX_REASON_BYTES) return reason;
  return new TextDecoder().decode(bytes.subarray(0, MAX_REASON_BYTES)).replace(/\uFFFD$/, '');
}
