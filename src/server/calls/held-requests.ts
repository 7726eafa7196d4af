/**
 * The bytes the daemon holds for requests in flight (arrived, not yet settled: waiting for a
 * sandbox process or running), bounded per connection (`maxHeldRequestBytes`) and for all
 * connections together (`maxHeldRequestBytesTotal`), as the bytes waiting to be sent are bounded
 * by `maxSendBufferBytes`. Without it, a connection could queue a thousand requests of 16 MiB each
 * behind a busy pool, all held in the daemon's memory. A request past a bound is refused before
 * it runs; it never waits for room.
 */
import { ExecutorError } from '../../protocol/errors.js';
import { formatHeldBytesPerConnection, formatHeldBytesTotal } from '../texts.js';

export interface HeldRequestLimits {
  maxHeldRequestBytes: number;
  maxHeldRequestBytesTotal: number;
}

/** Which bound refused a request: one connection's, or the daemon's. */
export type HeldBytesScope = 'connection' | 'daemon';

export class HeldRequests {
  readonly limits: HeldRequestLimits;
  #total = 0;
  /** Told which bound refused, for the metrics. */
  readonly #refused: (scope: HeldBytesScope) => void;

  constructor(limits: HeldRequestLimits, refused: (scope: HeldBytesScope) => void) {
    this.limits = limits;
    this.#refused = refused;
  }

  /** Bytes held by requests in flight, on every connection. */
  get total(): number {
    return this.#total;
  }

  /**
   * Takes `bytes` for a request of a connection that holds `connectionHeld` already; throws the
   * refusal when either bound would be passed. The caller gives them back with `give`.
   */
  take(connectionHeld: number, bytes: number): void {
    const { maxHeldRequestBytes, maxHeldRequestBytesTotal } = this.limits;
    if (connectionHeld + bytes > maxHeldRequestBytes) {
      this.#refused('connection');
      throw new ExecutorError(
        'LIMIT_EXCEEDED',
        formatHeldBytesPerConnection(connectionHeld, bytes, maxHeldRequestBytes),
      );
    }
    if (this.#total + bytes > maxHeldRequestBytesTotal) {
      this.#refused('daemon');
      throw new ExecutorError('QUEUE_FULL', formatHeldBytesTotal(this.#total, bytes, maxHeldRequestBytesTotal), {
        retryable: true,
      });
    }
    this.#total += bytes;
  }

  give(bytes: number): void {
    this.#total -= bytes;
  }
}
