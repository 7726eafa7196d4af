/**
 * Streams a call's events from the daemon to the client's sink (`WireEventSink`): the console
 * lines, and the fetches through the daemon's own outbound (a fetch through the client's outbound,
 * and every tool call, the client sees itself). One batch is in flight at a time; the next waits
 * for the client's answer, so a client that stops reading holds at most `maxQueuedEvents` of the
 * call here, and loses events, never the run. Lines it loses come back from the result's logs
 * where they can (observe-run.ts); the client counts the rest as dropped.
 */
import type { RunEvent } from '../../protocol/types.js';
import type { WireEventSink } from '../../wire/types.js';

export class WireEventStream {
  readonly #sink: WireEventSink;
  readonly #max: number;
  readonly #fetches: boolean;
  #waiting: RunEvent[] = [];
  #sending = false;
  #closed = false;

  /** `fetches`: the run fetches through the daemon's outbound, which the client cannot watch. */
  constructor(sink: WireEventSink, maxQueuedEvents: number, fetches: boolean) {
    this.#sink = sink;
    this.#max = maxQueuedEvents;
    this.#fetches = fetches;
  }

  /** The daemon executor's `onEvent`: takes what the client cannot see for itself. */
  readonly take = (event: RunEvent): void => {
    if (this.#closed) return;
    if (event.type !== 'console' && !(event.type === 'fetch' && this.#fetches)) return;
    if (this.#waiting.length >= this.#max) return;
    this.#waiting.push(event);
    if (!this.#sending) this.#send();
  };

  /**
   * The call settled: what waits goes now if nothing is in flight, ahead of the result on the same
   * socket; behind a batch the client has not answered, it stays, and the result's logs stand in.
   */
  close(): void {
    if (this.#closed) return;
    if (!this.#sending) this.#send();
    this.#closed = true;
    this.#waiting = [];
  }

  #send(): void {
    const batch = this.#waiting;
    if (batch.length === 0) return;
    this.#waiting = [];
    this.#sending = true;
    let sent: Promise<void>;
    try {
      sent = Promise.resolve(this.#sink(batch));
    } catch {
      this.#closed = true;
      return;
    }
    sent.then(
      () => {
        this.#sending = false;
        if (!this.#closed) this.#send();
      },
      // The client went away, or its stub was released with the call: nothing more is sent.
      () => {
        this.#closed = true;
      },
    );
  }
}
