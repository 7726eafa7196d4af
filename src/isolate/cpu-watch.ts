/**
 * A watchdog over one pool member's CPU time, as the kernel counts it for the process
 * (/proc/<pid>/stat, Linux): it calls back once the process has used a budget of CPU time. The
 * run clock uses it while a host wait stops the clock (run-clock.ts); a separate CPU bound can
 * use the same accounting.
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
