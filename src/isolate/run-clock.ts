/**
 * The run clock: a budget of milliseconds that, unless host waits count, stops while a tool call
 * or an outbound request is in flight. Overlapping waits stop it once.
 *
 * A stopped clock still counts what the sandbox does meanwhile: the process's own CPU time during
 * a host wait is spent from the budget (cpu-watch.ts), so a program that starts a tool call and
 * then spins is stopped at its bound although its clock is stopped.
 */
import { type CpuTimed, CpuWatch, MAX_TIMER_MS } from './cpu-watch.js';

export class RunClock {
  readonly #budget: number;
  readonly #countHostWaits: boolean;
  readonly #onExpire: () => void;
  readonly #process: CpuTimed;
  #spent = 0;
  #runningSince: number | undefined;
  #waits = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** While the clock is stopped for a host wait: the CPU time at the stop, and its watch. */
  #pausedAtCpu: number | undefined;
  #cpuWatch: CpuWatch | undefined;

  constructor(budgetMs: number, countHostWaits: boolean, process: CpuTimed, onExpire: () => void) {
    this.#budget = budgetMs;
    this.#countHostWaits = countHostWaits;
    this.#process = process;
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
    this.#cpuWatch?.stop();
  }

  #pause(): void {
    if (this.#runningSince === undefined) return;
    this.#spent += performance.now() - this.#runningSince;
    this.#runningSince = undefined;
    clearTimeout(this.#timer);
    this.#pausedAtCpu = this.#process.cpuMs();
    this.#cpuWatch = new CpuWatch(this.#process, Math.max(0, this.#budget - this.#spent), () => {
      if (this.#stopped) return;
      this.stop();
      this.#onExpire();
    });
    this.#cpuWatch.start(this.#pausedAtCpu);
  }

  #resume(): void {
    if (this.#stopped) return;
    this.#cpuWatch?.stop();
    this.#cpuWatch = undefined;
    const cpuNow = this.#process.cpuMs();
    if (this.#pausedAtCpu !== undefined && cpuNow !== undefined) this.#spent += cpuNow - this.#pausedAtCpu;
    this.#pausedAtCpu = undefined;
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
      Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(remaining))),
    );
  }
}
