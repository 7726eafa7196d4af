/**
 * The app-level liveness probe. capnweb has no heartbeat, and a frozen daemon (SIGSTOP) keeps its
 * socket open, so calls in flight would wait forever. While a session has calls running, this
 * sends `heartbeat()` every `interval` ms and declares the session dead when one goes unanswered
 * for `timeout` ms. A freeze is therefore detected within `interval + timeout` ms (plus
 * `VERDICT_GRACE_MS`).
 * Timers only: it works wherever `setTimeout` does (Node, workerd, browsers).
 */
import { formatHeartbeatTimeout } from './texts.js';

/** The verdict waits this much past the timeout, so the event loop reads the socket once more first. */
const VERDICT_GRACE_MS = 10;

export interface HeartbeatOptions {
  interval: number;
  timeout: number;
  /** One probe; rejects or never settles when the peer is gone. */
  ping(): Promise<unknown>;
  /** Called once, with the reason, when a probe goes unanswered. */
  onDead(reason: Error): void;
}

export class Heartbeat {
  readonly #options: HeartbeatOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by `stop`, so a probe that settles afterwards schedules nothing. */
  #generation = 0;
  #dead = false;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#dead || this.#timer !== undefined) return;
    this.#schedule(this.#generation);
  }

  stop(): void {
    this.#generation += 1;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(generation: number): void {
    this.#timer = setTimeout(() => this.#probe(generation), this.#options.interval);
  }

  #probe(generation: number): void {
    const { ping, timeout, onDead } = this.#options;
    let answered = false;
    this.#timer = setTimeout(() => {
      // One more turn of the event loop before the verdict: if this process was blocked (a
      // synchronous tool, say), the answer may be waiting in the socket, and timers run first.
      this.#timer = setTimeout(() => {
        if (answered || generation !== this.#generation || this.#dead) return;
        this.#dead = true;
        this.#timer = undefined;
        onDead(new Error(formatHeartbeatTimeout(timeout)));
      }, VERDICT_GRACE_MS);
    }, timeout);
    ping().then(
      () => {
        answered = true;
        if (generation !== this.#generation || this.#dead) return;
        clearTimeout(this.#timer);
        this.#schedule(generation);
      },
      () => {
        // A rejected probe means the session broke; onRpcBroken reports that, not the heartbeat.
        if (generation !== this.#generation) return;
        clearTimeout(this.#timer);
        this.#timer = undefined;
      },
    );
  }
}
