/**
 * A watchdog over one running pool member's CPU time, as the kernel counts it for the process
 * (/proc/<pid>/stat, Linux). It never pauses, so it holds where the run clock does not: a spin
 * is stopped at its bound even while a host wait has the clock stopped. The budget is the
 * caller's: the run's bound today; a separate CPU bound can use the same accounting.
 */

/** What the watchdog reads of a process; `undefined` where the platform cannot tell. */
export interface CpuTimed {
  cpuMs(): number | undefined;
}

const WATCH_INTERVAL_MS = 20;

export class CpuWatch {
  readonly #process: CpuTimed;
  readonly #budgetMs: number;
  readonly #spent: () => void;
  #atStart: number | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** `spent` is called once, when the process has used `budgetMs` of CPU time since `start()`. */
  constructor(process: CpuTimed, budgetMs: number, spent: () => void) {
    this.#process = process;
    this.#budgetMs = budgetMs;
    this.#spent = spent;
  }

  start(): void {
    this.#atStart = this.#process.cpuMs();
    if (this.#atStart === undefined) return;
    this.#timer = setInterval(() => this.#check(), WATCH_INTERVAL_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    const used = this.#process.cpuMs();
    if (used === undefined || this.#atStart === undefined || used - this.#atStart < this.#budgetMs) return;
    this.stop();
    this.#spent();
  }
}
