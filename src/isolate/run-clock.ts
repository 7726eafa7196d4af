/**
 * The run clock: a budget of milliseconds that, unless host waits count, stops while a tool call
 * or an outbound request is in flight. Overlapping waits stop it once.
 */
export class RunClock {
  readonly #budget: number;
  readonly #countHostWaits: boolean;
  readonly #onExpire: () => void;
  #spent = 0;
  #runningSince: number | undefined;
  #waits = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(budgetMs: number, countHostWaits: boolean, onExpire: () => void) {
    this.#budget = budgetMs;
    this.#countHostWaits = countHostWaits;
    this.#onExpire = onExpire;
  }

  start(): void {
    this.#resume();
  }

  beginHostWait(): void {
    if (this.#countHostWaits || this.#stopped) return;
    this.#waits += 1;
    if (this.#waits === 1) this.#pause();
  }

  endHostWait(): void {
    if (this.#countHostWaits || this.#stopped || this.#waits === 0) return;
    this.#waits -= 1;
    if (this.#waits === 0) this.#resume();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #pause(): void {
    if (this.#runningSince === undefined) return;
    this.#spent += performance.now() - this.#runningSince;
    this.#runningSince = undefined;
    clearTimeout(this.#timer);
  }

  #resume(): void {
    if (this.#stopped) return;
    this.#runningSince = performance.now();
    this.#arm();
  }

  #arm(): void {
    const remaining = this.#budget - this.#spent - (performance.now() - this.#runningSince!);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => {
        if (this.#stopped || this.#runningSince === undefined) return;
        // Timers may fire a hair early; only a spent budget expires.
        if (this.#spent + (performance.now() - this.#runningSince) < this.#budget) {
          this.#arm();
          return;
        }
        this.stop();
        this.#onExpire();
      },
      Math.max(0, Math.ceil(remaining)),
    );
  }
}
