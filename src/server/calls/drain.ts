/**
 * The daemon's drain: the executions in flight across every connection, and the wait for them when
 * the server closes. From `begin()` on, `draining` is true: the gate refuses new sessions and each
 * connection new executions. The running ones get `drainTimeoutMs` to finish; past it each
 * connection gives up what is left, and the stop waits a bounded grace more, never a hang.
 */
import type { LogSink } from '../observe/log.js';
import { type ExecutionKind, formatDrainCancelledCall, formatDrainTimedOut } from '../texts.js';

/** How long cancelled executions may take to end after the drain timeout before the stop goes on. */
const GIVE_UP_GRACE_MS = 5_000;

/** Gives up every connection's running calls: `why` for the log, `toClient` for each caller. */
type GiveUpAll = (why: string, toClient: (kind: ExecutionKind) => string) => void;

export class Drain {
  readonly #drainTimeoutMs: number;
  readonly #log: LogSink;
  #draining = false;
  #running = 0;
  /** Resolves the wait of `settle()` once the last execution in flight ends. */
  #idle: (() => void) | undefined;
  /** Set once the drain timeout passed: from then on nothing waits past it. */
  #grace: Promise<void> | undefined;

  constructor(drainTimeoutMs: number, log: LogSink) {
    this.#drainTimeoutMs = drainTimeoutMs;
    this.#log = log;
  }

  /** True from `begin()` on. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Executions in flight, across every connection. */
  get running(): number {
    return this.#running;
  }

  /** Counts an execution in flight; the returned function ends it, once, however often it is called. */
  track(): () => void {
    this.#running += 1;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      this.#running -= 1;
      if (this.#running === 0) this.#idle?.();
    };
  }

  /** Refuses new sessions and executions from now on. */
  begin(): void {
    this.#draining = true;
  }

  /**
   * Waits for the executions in flight, up to the drain timeout; past it, logs why, gives up every
   * connection's calls and waits at most the grace more for them to end.
   */
  async settle(giveUpAll: GiveUpAll): Promise<void> {
    if (this.#running === 0) return;
    const finished = new Promise<void>((resolve) => (this.#idle = resolve));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.#drainTimeoutMs);
    });
    if ((await Promise.race([finished, timedOut])) === 'timeout') {
      const why = formatDrainTimedOut(this.#running, this.#drainTimeoutMs);
      this.#log(why, 'warn');
      giveUpAll(why, (kind) => formatDrainCancelledCall(kind, this.#drainTimeoutMs));
      // An executor that ignores its signal still gets a bounded wait, not a hang.
      this.#grace = new Promise((resolve) => setTimeout(resolve, GIVE_UP_GRACE_MS).unref());
      await Promise.race([finished, this.#grace]);
    }
    clearTimeout(timer);
  }

  /** Waits for `work`, but once the drain timeout has passed no longer than its grace. */
  within(work: Promise<void>): Promise<void> {
    return this.#grace === undefined ? work : Promise.race([work, this.#grace]);
  }
}
