/**
 * A watchdog over one running pool member, reading what the kernel counts for its process: the
 * CPU time it has used and its resident memory. It never pauses, so it holds where the run clock
 * does not: a spin is stopped at its bound even while a host wait stops the clock, and memory is
 * capped during the run rather than looked at after it.
 *
 * It samples every WATCH_INTERVAL_MS. Between two samples a process can outgrow the cap by what
 * it writes in that time; the executor's documented bound (docs/isolate.md, Limits) allows for it.
 */

/** What the watchdog reads of a process; `undefined` where the platform cannot tell. */
export interface WatchedProcess {
  cpuMs(): number | undefined;
  rssMb(): number | undefined;
}

export interface WatchBounds {
  /** CPU time the process may use from `start()`, in ms. */
  cpuBudgetMs: number;
  /** Resident memory the process may reach, in MB. */
  memoryLimitMb: number;
}

export interface WatchAlarms {
  /** The process has used its CPU budget. */
  cpuSpent(): void;
  /** The process passed the memory cap; `rssMb` is what was read. */
  memoryExceeded(rssMb: number): void;
}

const WATCH_INTERVAL_MS = 5;

export class ProcessWatch {
  readonly #process: WatchedProcess;
  readonly #bounds: WatchBounds;
  readonly #alarms: WatchAlarms;
  #cpuAtStart: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #rang = false;

  constructor(process: WatchedProcess, bounds: WatchBounds, alarms: WatchAlarms) {
    this.#process = process;
    this.#bounds = bounds;
    this.#alarms = alarms;
  }

  start(): void {
    this.#cpuAtStart = this.#process.cpuMs();
    this.#timer = setInterval(() => this.check(), WATCH_INTERVAL_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One sample; each alarm rings at most once, and the watch stops when one does. */
  check(): void {
    if (this.#rang) return;
    const rss = this.#process.rssMb();
    if (rss !== undefined && rss > this.#bounds.memoryLimitMb) {
      this.#ring(() => this.#alarms.memoryExceeded(rss));
      return;
    }
    const cpu = this.#process.cpuMs();
    if (cpu !== undefined && this.#cpuAtStart !== undefined && cpu - this.#cpuAtStart >= this.#bounds.cpuBudgetMs) {
      this.#ring(() => this.#alarms.cpuSpent());
    }
  }

  #ring(alarm: () => void): void {
    this.#rang = true;
    this.stop();
    alarm();
  }
}
