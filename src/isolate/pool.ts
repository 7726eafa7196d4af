/**
 * The pool of workerd processes. One run per process at a time; at most `maxWorkers` busy; up to
 * `spare` warm processes beyond the busy ones, so a replacement never waits for a spawn; a bounded
 * queue of waiting runs. It decides which process serves whom, and when a process is replaced:
 * after a kill, a death, `recycleAfterRuns` runs, or `maxRssMb` of resident memory.
 *
 * A process that holds retained executions is never killed for recycling: it stops taking new
 * executions (draining) and ends once its last retained execution is closed.
 */
import { ExecutorError } from '../protocol/errors.js';
import type { IsolateSettings } from './options.js';
import type { ProcessFate } from './run.js';
import type { SandboxProcess } from './sandbox-process.js';
import { isolateText } from './texts.js';

interface Waiter {
  resolve(process: SandboxProcess): void;
  reject(error: unknown): void;
  /** An invocation of a retained execution: only this process can serve it. */
  target?: SandboxProcess;
  /** The error a targeted waiter gets when its process ends first. */
  lost?: () => ExecutorError;
}

/** A waiter's way out of the queue: its caller's signal, and what it then rejects with. */
export interface AcquireCancel {
  signal: AbortSignal;
  error: () => ExecutorError;
}

export interface PoolMemberStats {
  pid: number;
  runs: number;
  rssMb: number | undefined;
  busy: boolean;
  draining: boolean;
  retained: number;
}

export interface PoolStats {
  members: PoolMemberStats[];
  starting: number;
  queued: number;
}

export type PoolSettings = Pick<IsolateSettings, 'maxWorkers' | 'spare' | 'maxQueue' | 'recycleAfterRuns' | 'maxRssMb'>;

export class Pool {
  readonly #settings: PoolSettings;
  readonly #launch: () => Promise<SandboxProcess>;
  readonly #members = new Set<SandboxProcess>();
  readonly #launching = new Set<Promise<unknown>>();
  #idle: SandboxProcess[] = [];
  #waiters: Waiter[] = [];
  #busy = 0;
  #started = false;
  #disposed = false;

  constructor(settings: PoolSettings, launch: () => Promise<SandboxProcess>) {
    this.#settings = settings;
    this.#launch = launch;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /**
   * A process reserved for one run, to hand back with `release`. With a target, that process
   * and no other (a retained execution lives there).
   */
  acquire(
    target?: { process: SandboxProcess; lost: () => ExecutorError },
    cancel?: AcquireCancel,
  ): Promise<SandboxProcess> {
    if (this.#disposed) return Promise.reject(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    if (cancel?.signal.aborted) return Promise.reject(cancel.error());
    this.#started = true;
    return new Promise<SandboxProcess>((settleResolve, settleReject) => {
      // A waiter leaves the queue when its caller aborts; once served or failed, it stops listening.
      const withdraw = () => {
        const at = this.#waiters.indexOf(waiter);
        if (at < 0) return;
        this.#waiters.splice(at, 1);
        settleReject(cancel!.error());
      };
      const stopListening = () => cancel?.signal.removeEventListener('abort', withdraw);
      const resolve = (process: SandboxProcess) => {
        stopListening();
        settleResolve(process);
      };
      const reject = (error: unknown) => {
        stopListening();
        settleReject(error);
      };
      const waiter: Waiter = { resolve, reject };
      if (target !== undefined) {
        waiter.target = target.process;
        waiter.lost = target.lost;
      }
      this.#waiters.push(waiter);
      this.#pump();
      const freeSlots = Math.max(0, this.#settings.maxWorkers - this.#busy);
      if (this.#waiters.includes(waiter) && this.#waiters.length - freeSlots > this.#settings.maxQueue) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new ExecutorError('QUEUE_FULL', isolateText.queueFull(this.#settings.maxQueue), { retryable: true }));
        return;
      }
      if (this.#waiters.includes(waiter)) cancel?.signal.addEventListener('abort', withdraw, { once: true });
      this.#ensureCapacity();
    });
  }

  release(process: SandboxProcess, fate: ProcessFate): void {
    if (!process.busy) return;
    process.busy = false;
    this.#busy -= 1;
    process.runs += 1;
    if (!this.#members.has(process) || fate === 'dead') {
      // Its end is handled by #ended.
    } else if (fate === 'kill' || this.#disposed) {
      process.kill();
    } else if (fate === 'retire' || this.#worn(process)) {
      this.#retire(process);
    } else if (process.draining) {
      if (process.retained.size === 0) process.kill();
    } else {
      this.#idle.push(process);
    }
    this.#pump();
    this.#ensureCapacity();
  }

  /** A draining process whose last retained execution was just closed can go now. */
  retainedClosed(process: SandboxProcess): void {
    if (process.draining && !process.busy && process.retained.size === 0) process.kill();
  }

  stats(): PoolStats {
    return {
      members: [...this.#members].map((process) => ({
        pid: process.pid,
        runs: process.runs,
        rssMb: process.rssMb(),
        busy: process.busy,
        draining: process.draining,
        retained: process.retained.size,
      })),
      starting: this.#launching.size,
      queued: this.#waiters.length,
    };
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter.reject(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    await Promise.allSettled([...this.#launching]);
    const members = [...this.#members];
    for (const process of members) process.kill();
    await Promise.all(members.map((process) => process.ended));
  }

  #worn(process: SandboxProcess): boolean {
    if (process.runs >= this.#settings.recycleAfterRuns) return true;
    const rss = process.rssMb();
    return rss !== undefined && rss > this.#settings.maxRssMb;
  }

  #retire(process: SandboxProcess): void {
    if (process.retained.size > 0) process.draining = true;
    else process.kill();
  }

  #pump(): void {
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters[i]!;
      const target = waiter.target;
      if (target !== undefined && !this.#members.has(target)) {
        this.#waiters.splice(i, 1);
        waiter.reject(waiter.lost!());
        continue;
      }
      if (this.#busy >= this.#settings.maxWorkers) return;
      let process: SandboxProcess | undefined;
      if (target === undefined) process = this.#idle.pop();
      else if (!target.busy) {
        process = target;
        const at = this.#idle.indexOf(target);
        if (at >= 0) this.#idle.splice(at, 1);
      }
      if (process === undefined) {
        i += 1;
        continue;
      }
      this.#waiters.splice(i, 1);
      process.busy = true;
      this.#busy += 1;
      waiter.resolve(process);
    }
  }

  /** Spawns until the busy processes, the runnable waiters and the spares are covered. */
  #ensureCapacity(): void {
    if (this.#disposed || !this.#started) return;
    let active = this.#launching.size;
    let busyActive = 0;
    for (const process of this.#members) {
      if (process.draining) continue;
      active += 1;
      if (process.busy) busyActive += 1;
    }
    const waiting = this.#waiters.filter((waiter) => waiter.target === undefined).length;
    const { maxWorkers, spare } = this.#settings;
    const desired = Math.min(maxWorkers + spare, busyActive + Math.min(waiting, maxWorkers) + spare);
    for (; active < desired; active += 1) this.#spawn();
  }

  #spawn(): void {
    const launching = this.#launch().then(
      (process) => {
        this.#launching.delete(launching);
        if (this.#disposed) {
          process.kill();
          return;
        }
        this.#members.add(process);
        this.#idle.push(process);
        void process.ended.then(() => this.#ended(process));
        this.#pump();
      },
      (error: unknown) => {
        this.#launching.delete(launching);
        // Nothing alive or coming can serve the waiters: fail them rather than let them wait.
        // No respawn from here, so a broken installation does not spin; the next call retries.
        if (this.#members.size === 0 && this.#launching.size === 0) {
          const failed = this.#waiters;
          this.#waiters = [];
          for (const waiter of failed) waiter.reject(error);
        }
      },
    );
    this.#launching.add(launching);
  }

  #ended(process: SandboxProcess): void {
    this.#members.delete(process);
    const at = this.#idle.indexOf(process);
    if (at >= 0) this.#idle.splice(at, 1);
    this.#pump();
    this.#ensureCapacity();
  }
}
