/**
 * Delivers one call's events to the host's `onEvent`, in order, without ever holding the run up.
 * An event is handed over at once while the callback is idle; a callback that returns a promise is
 * awaited before the next, and events arriving meanwhile wait in a queue of `maxQueuedEvents`.
 * Past that they are dropped and counted, and `end`, which always gets through, carries the count.
 * A throw or a rejection is the callback's own: reported once on `console.warn`, never the run's.
 */
import { messageOf } from '../protocol/message-of.js';
import type { EndEvent, OnRunEvent, RunEvent } from '../protocol/types.js';
import { formatOnEventFailed } from './texts.js';

export class EventQueue {
  readonly #onEvent: OnRunEvent;
  readonly #max: number;
  readonly #waiting: RunEvent[] = [];
  #busy = false;
  #ended = false;
  #dropped = 0;
  #reported = false;

  constructor(onEvent: OnRunEvent, maxQueuedEvents: number) {
    this.#onEvent = onEvent;
    this.#max = maxQueuedEvents;
  }

  /** Whether `end` was pushed: nothing is taken after it. */
  get ended(): boolean {
    return this.#ended;
  }

  push(event: RunEvent): void {
    if (this.#ended) return;
    if (this.#busy) {
      if (this.#waiting.length >= this.#max) this.#dropped += 1;
      else this.#waiting.push(event);
      return;
    }
    this.#deliver(event);
  }

  /**
   * The last event, with the count of those dropped (here, and `droppedElsewhere` on the way, such
   * as a daemon's stream); it waits beyond the bound if it must.
   */
  end(event: Omit<EndEvent, 'dropped'>, droppedElsewhere = 0): void {
    if (this.#ended) return;
    this.#ended = true;
    const last: EndEvent = { ...event, dropped: this.#dropped + droppedElsewhere };
    if (this.#busy) this.#waiting.push(last);
    else this.#deliver(last);
  }

  #deliver(event: RunEvent): void {
    let returned: unknown;
    try {
      returned = this.#onEvent(event);
    } catch (error) {
      this.#report(error);
      return;
    }
    if (typeof (returned as PromiseLike<void> | undefined)?.then !== 'function') return;
    this.#busy = true;
    Promise.resolve(returned).then(
      () => this.#next(),
      (error: unknown) => {
        this.#report(error);
        this.#next();
      },
    );
  }

  #next(): void {
    this.#busy = false;
    // Delivered one at a time: an event whose callback returns a promise makes the rest wait again.
    while (!this.#busy) {
      const event = this.#waiting.shift();
      if (event === undefined) return;
      this.#deliver(event);
    }
  }

  #report(error: unknown): void {
    if (this.#reported) return;
    this.#reported = true;
    console.warn(formatOnEventFailed(messageOf(error)));
  }
}
