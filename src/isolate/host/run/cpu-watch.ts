/**
 * A watchdog over one pool member's CPU time, as the kernel counts it for the process
 * (/proc/<pid>/stat, Linux): it calls back once the process has used a budget of CPU time. The
 * run clock uses it while a host wait stops the clock, and a run's `cpuTimeout` is one over the
 * whole run (both in run-clocks.ts).
 *
 * A process cannot spend CPU time faster than the host has cores, so the watch reads it again only
 * when the rest of the budget could have been spent at that rate, and at most every
 * MIN_INTERVAL_MS as the end nears: a waiting process is read a few times over its whole budget,
 * a spinning one is stopped within MIN_INTERVAL_MS of its bound. Hundreds of watched runs then
 * cost the host's event loop almost nothing.
 */
import { availableParallelism } from 'node:os';
import { MAX_TIMER_MS } from '../options/max-timer.js';

/** What the watchdog reads of a process; `undefined` where the platform cannot tell. */
export interface CpuTimed {
  cpuMs(): number | undefined;
}

const MIN_INTERVAL_MS = 20;
/** CPU ms a process can spend per wall-clock ms, at most. */
const CORES = availableParallelism();

export class CpuWatch {
  readonly #watched: CpuTimed;
  readonly #budgetMs: number;
  readonly #spent: () => void;
  #atStart: number | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** `spent` is called once, when the process has used `budgetMs` of CPU time since `start()`. */
  constructor(watched: CpuTimed, budgetMs: number, spent: () => void) {
    this.#watched = watched;
    this.#budgetMs = budgetMs;
    this.#spent = spent;
  }

  /**
   * An infinite budget only measures (`used()`). `cpuMsNow`: a reading the caller just took, so
   * the process is not read twice for one instant.
   */
  start(cpuMsNow: number | undefined = this.#watched.cpuMs()): void {
    this.#atStart = cpuMsNow;
    if (this.#atStart === undefined || !Number.isFinite(this.#budgetMs)) return;
    this.#schedule(this.#budgetMs);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The CPU time used since `start()`, or undefined where the platform cannot tell. */
  used(): number | undefined {
    const now = this.#watched.cpuMs();
    return now === undefined || this.#atStart === undefined ? undefined : now - this.#atStart;
  }

  #schedule(remainingMs: number): void {
    const delay = Math.min(MAX_TIMER_MS, Math.max(MIN_INTERVAL_MS, Math.floor(remainingMs / CORES)));
    this.#timer = setTimeout(() => this.#check(), delay);
  }

  #check(): void {
    const used = this.used();
    if (used === undefined) return;
    if (used < this.#budgetMs) {
      this.#schedule(this.#budgetMs - used);
      return;
    }
    this.stop();
    this.#spent();
  }
}
