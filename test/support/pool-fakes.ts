/**
 * Fakes for the pool's policy tests: processes from a fake launch, a clock the test advances, and
 * memory each fake process reports as the test sets it.
 */
import type { PoolClock } from '../../src/isolate/host/pool/clock.js';
import type { BudgetOverrun } from '../../src/isolate/host/pool/memory-budget.js';
import { Pool } from '../../src/isolate/host/pool/pool.js';
import type { PoolProcess } from '../../src/isolate/host/pool/pool-member.js';
import type { PoolSettings } from '../../src/isolate/host/pool/pool-settings.js';
import type { ShareReclaim } from '../../src/isolate/host/pool/tenancy.js';

export class FakeProcess implements PoolProcess {
  static #nextPid = 1000;
  readonly pid = FakeProcess.#nextPid++;
  alive = true;
  killed = false;
  rss: number | undefined = 40;
  /** What the budget reads of it: its private memory and the pages it shares, in MB. */
  privateMb = 10;
  sharedMb = 30;
  readonly ended: Promise<{ intended: boolean }>;
  #end!: (end: { intended: boolean }) => void;

  constructor() {
    this.ended = new Promise((resolve) => {
      this.#end = resolve;
    });
  }

  kill(): void {
    this.killed = true;
    this.#exit(true);
  }

  /** Ends on its own, as a crash would. */
  die(): void {
    this.#exit(false);
  }

  rssMb(): number | undefined {
    return this.rss;
  }

  #exit(intended: boolean): void {
    if (!this.alive) return;
    this.alive = false;
    this.#end({ intended });
  }
}

/** A clock that moves only when the test says. */
export class FakeClock implements PoolClock {
  #now = 0;
  #timers: { due: number; callback: () => void }[] = [];

  now(): number {
    return this.#now;
  }

  schedule(callback: () => void, delayMs: number): () => void {
    const timer = { due: this.#now + delayMs, callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((other) => other !== timer);
    };
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves the time on, firing what falls due; a timer that keeps rearming at once fails the test. */
  advance(ms: number): void {
    this.#now += ms;
    for (let round = 0; ; round += 1) {
      const due = this.#timers.filter((timer) => timer.due <= this.#now);
      if (due.length === 0) return;
      if (round === 100) throw new Error(`timers still falling due after ${round} rounds at ${this.#now} ms`);
      this.#timers = this.#timers.filter((timer) => !due.includes(timer));
      for (const timer of due) timer.callback();
    }
  }
}

/** A launch the test completes by hand: each call is pending until `start` (or `fail`). */
function fakeLaunch() {
  const pending: { resolve: (process: FakeProcess) => void; reject: (error: unknown) => void }[] = [];
  const started: FakeProcess[] = [];
  return {
    launch: () =>
      new Promise<FakeProcess>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
    /** How many launches are waiting to complete. */
    starting: () => pending.length,
    started,
    /** Completes every pending launch. */
    async startAll(): Promise<void> {
      for (const launch of pending.splice(0)) {
        const process = new FakeProcess();
        started.push(process);
        launch.resolve(process);
      }
      await settle();
    },
    async failAll(error: unknown): Promise<void> {
      for (const launch of pending.splice(0)) launch.reject(error);
      await settle();
    },
  };
}

/** Lets every promise callback queued so far run. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const BASE: PoolSettings = {
  maxWorkers: 4,
  minWorkers: 0,
  spare: 1,
  idleTimeoutMs: 1_000,
  maxStarting: 2,
  maxQueue: 10,
  recycleAfterRuns: 200,
  maxRssMb: 512,
  maxNestedRuns: 2,
  // Far above what the fakes hold, so only the budget's own tests meet it.
  memoryBudgetMb: 100_000,
  runsPerMember: 1,
};

export function poolWith(settings: Partial<PoolSettings> = {}, retained = new Map<FakeProcess, number>()) {
  const launcher = fakeLaunch();
  const clock = new FakeClock();
  const overBudget: { process: FakeProcess; overrun: BudgetOverrun }[] = [];
  const evicted: FakeProcess[] = [];
  const reclaimed: { process: FakeProcess; reclaim: ShareReclaim }[] = [];
  const pool: Pool<FakeProcess> = new Pool<FakeProcess>({
    settings: { ...BASE, ...settings },
    launch: launcher.launch,
    clock,
    retainedOn: (process) => retained.get(process) ?? 0,
    measure: (process) => (process.alive ? { privateMb: process.privateMb, sharedMb: process.sharedMb } : undefined),
    overBudget: (process, overrun) => overBudget.push({ process, overrun }),
    // As the executor does: its retained executions close, and the pool lets the process end.
    evict: (process) => {
      evicted.push(process);
      retained.delete(process);
      pool.retainedClosed(process);
    },
    reclaim: (process, reclaim) => reclaimed.push({ process, reclaim }),
  });
  return { pool, launcher, clock, retained, overBudget, evicted, reclaimed };
}

/** Records how an acquire settled, so a test can check it has not settled yet. */
export function track<T>(promise: Promise<T>) {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}
