/**
 * The app-level liveness probe. capnweb has no heartbeat, and a frozen daemon (SIGSTOP) keeps its
 * socket open, so calls in flight would wait forever. While a session has calls running, this
 * sends `heartbeat()` every `interval` ms, on a fixed cadence, and declares the session dead when
 * one goes unanswered for `timeout` ms. A freeze is therefore detected within `interval + timeout`
 * ms (plus `VERDICT_GRACE_MS`).
 *
 * The daemon holds the client to the same bound from its side (the call's `heartbeatLease`): when
 * it has heard nothing for `interval + timeout` ms it drops the connection and gives its calls up,
 * since by then this side has declared the session dead, or is about to.
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
  #cadence: ReturnType<typeof setTimeout> | undefined;
  /** The verdict timers of probes still unanswered. */
  readonly #verdicts = new Set<ReturnType<typeof setTimeout>>();
  /** Bumped by `stop`, so a probe that settles afterwards changes nothing. */
  #generation = 0;
  #dead = false;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#dead || this.#cadence !== undefined) return;
    this.#schedule(this.#generation);
  }

  stop(): void {
    this.#generation += 1;
    if (this.#cadence !== undefined) clearTimeout(this.#cadence);
    this.#cadence = undefined;
    for (const timer of this.#verdicts) clearTimeout(timer);
    this.#verdicts.clear();
  }

  #schedule(generation: number): void {
    this.#cadence = setTimeout(() => this.#probe(generation), this.#options.interval);
  }

  #probe(generation: number): void {
    const { ping, timeout, onDead } = this.#options;
    // The next probe goes out on the cadence whether or not this one is answered, so the daemon
    // hears from a live client at least every `interval` ms.
    this.#schedule(generation);
    let answered = false;
    let verdict = setTimeout(() => {
      this.#verdicts.delete(verdict);
      // One more turn of the event loop before the verdict: if this process was blocked (a
      // synchronous tool, say), the answer may be waiting in the socket, and timers run first.
      verdict = setTimeout(() => {
        this.#verdicts.delete(verdict);
        if (answered || generation !== this.#generation || this.#dead) return;
        this.#dead = true;
        this.stop();
        onDead(new Error(formatHeartbeatTimeout(timeout)));
      }, VERDICT_GRACE_MS);
      this.#verdicts.add(verdict);
    }, timeout);
    this.#verdicts.add(verdict);
    const settle = () => {
      answered = true;
      clearTimeout(verdict);
      this.#verdicts.delete(verdict);
    };
    // A rejected probe means the session broke; onRpcBroken reports that, not the heartbeat.
    ping().then(settle, settle);
  }
}
