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

/** What the pool knows of one member. Only the pool writes it. */
interface MemberState {
  /** Runs completed in it (executions and invocations). */
  runs: number;
  /** The ids of the retained executions it holds. */
  readonly retained: Set<string>;
  /** Reserved for one run, from `acquire` to `release`. */
  busy: boolean;
  /** No new executions: it is being recycled but still holds retained executions. */
  draining: boolean;
  /** Its process is gone; the state stays until the run that was in it is released. */
  ended: boolean;
}

export class Pool {
  readonly #settings: PoolSettings;
  readonly #launch: () => Promise<SandboxProcess>;
  /** Every member not yet both ended and released. */
  readonly #members = new Map<SandboxProcess, MemberState>();
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
    const state = this.#members.get(process);
    if (state === undefined || !state.busy) return;
    state.busy = false;
    this.#busy -= 1;
    state.runs += 1;
    if (state.ended) {
      this.#members.delete(process);
    } else if (fate === 'dead') {
      // Its end is handled by #ended.
    } else if (fate === 'kill' || this.#disposed) {
      process.kill();
    } else if (fate === 'retire' || this.#worn(process, state)) {
      this.#retire(process, state);
    } else if (state.draining) {
      if (state.retained.size === 0) process.kill();
    } else {
      this.#idle.push(process);
    }
    this.#pump();
    this.#ensureCapacity();
  }

  /** The run just settled holds a retained execution: the process is not recycled under it. */
  retain(process: SandboxProcess, executionId: string): void {
    this.#members.get(process)?.retained.add(executionId);
  }

  /** A retained execution was closed; a draining process whose last one it was can go now. */
  closeRetained(process: SandboxProcess, executionId: string): void {
    const state = this.#members.get(process);
    if (state === undefined) return;
    state.retained.delete(executionId);
    if (state.draining && !state.busy && state.retained.size === 0) process.kill();
  }

  stats(): PoolStats {
    return {
      members: this.#live().map(([process, state]) => ({
        pid: process.pid,
        runs: state.runs,
        rssMb: process.rssMb(),
        busy: state.busy,
        draining: state.draining,
        retained: state.retained.size,
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
    const members = this.#live().map(([process]) => process);
    for (const process of members) process.kill();
    await Promise.all(members.map((process) => process.ended));
  }

  /** The members whose process is still there. */
  #live(): [SandboxProcess, MemberState][] {
    return [...this.#members].filter(([, state]) => !state.ended);
  }

  #worn(process: SandboxProcess, state: MemberState): boolean {
    if (state.runs >= this.#settings.recycleAfterRuns) return true;
    const rss = process.rssMb();
    return rss !== undefined && rss > this.#settings.maxRssMb;
  }

  #retire(process: SandboxProcess, state: MemberState): void {
    if (state.retained.size > 0) state.draining = true;
    else process.kill();
  }

  #pump(): void {
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters[i]!;
      const target = waiter.target;
      const targetState = target === undefined ? undefined : this.#members.get(target);
      if (target !== undefined && (targetState === undefined || targetState.ended)) {
        this.#waiters.splice(i, 1);
        waiter.reject(waiter.lost!());
        continue;
      }
      if (this.#busy >= this.#settings.maxWorkers) return;
      let process: SandboxProcess | undefined;
      if (target === undefined) process = this.#idle.pop();
      else if (targetState?.busy === false) {
        process = target;
        const at = this.#idle.indexOf(target);
        if (at >= 0) this.#idle.splice(at, 1);
      }
      const state = process === undefined ? undefined : this.#members.get(process);
      if (process === undefined || state === undefined) {
        i += 1;
        continue;
      }
      this.#waiters.splice(i, 1);
      state.busy = true;
      this.#busy += 1;
      waiter.resolve(process);
    }
  }

  /** Spawns until the busy processes, the runnable waiters and the spares are covered. */
  #ensureCapacity(): void {
    if (this.#disposed || !this.#started) return;
    let active = this.#launching.size;
    let busyActive = 0;
    for (const [, state] of this.#live()) {
      if (state.draining) continue;
      active += 1;
      if (state.busy) busyActive += 1;
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
        this.#members.set(process, { runs: 0, retained: new Set(), busy: false, draining: false, ended: false });
        this.#idle.push(process);
        void process.ended.then(() => this.#ended(process));
        this.#pump();
      },
      (error: unknown) => {
        this.#launching.delete(launching);
        // Nothing alive or coming can serve the waiters: fail them rather than let them wait.
        // No respawn from here, so a broken installation does not spin; the next call retries.
        if (this.#live().length === 0 && this.#launching.size === 0) {
          const failed = this.#waiters;
          this.#waiters = [];
          for (const waiter of failed) waiter.reject(error);
        }
      },
    );
    this.#launching.add(launching);
  }

  #ended(process: SandboxProcess): void {
    const state = this.#members.get(process);
    if (state !== undefined) state.ended = true;
    if (state?.busy !== true) this.#members.delete(process);
    const at = this.#idle.indexOf(process);
    if (at >= 0) this.#idle.splice(at, 1);
    this.#pump();
    this.#ensureCapacity();
  }
}
