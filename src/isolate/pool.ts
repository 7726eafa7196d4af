/**
 * The pool of workerd processes, elastic. One run per process at a time. It grows on demand to
 * `maxWorkers` busy processes, starting at most `maxStarting` at once, so a burst does not spend
 * every core on spawning; it keeps `spare` warm processes beyond the busy ones, so a replacement
 * never waits for a spawn; and it reaps a process idle for `idleTimeoutMs`, down to `minWorkers`
 * (and the spares). A bounded queue holds the runs waiting beyond `maxWorkers`. It decides which
 * process serves whom, and when a process ends: after a kill, a death, `recycleAfterRuns` runs,
 * `maxRssMb` of resident memory, or idleness.
 *
 * A process that holds a retained execution never takes another execution: it drains, serving
 * only that execution's handle calls, and ends once the execution is closed. A run started from a
 * tool call of a running execution (nested) may be admitted beyond `maxWorkers`, up to
 * `maxNestedRuns` such runs, so it never waits on the slot its parent holds.
 */
import { ExecutorError } from '../protocol/errors.js';
import { MAX_TIMER_MS } from './cpu-watch.js';
import type { IsolateSettings } from './options.js';
import { pssMb } from './process-memory.js';
import type { ProcessFate } from './run.js';
import type { ProcessEnd, SandboxProcess } from './sandbox-process.js';
import { isolateText } from './texts.js';

interface Waiter {
  resolve(process: SandboxProcess): void;
  reject(error: unknown): void;
  /** Served or failed: no longer in the queue. */
  settled: boolean;
  /** An invocation of a retained execution: only this process can serve it. */
  target?: SandboxProcess;
  /** The error a targeted waiter gets when its process ends first. */
  lost?: () => ExecutorError;
  /** Started from a tool call of a running execution: may run beyond `maxWorkers`. */
  nested: boolean;
}

/** A waiter's way out of the queue: its caller's signal, and what it then rejects with. */
export interface AcquireCancel {
  signal: AbortSignal;
  error: () => ExecutorError;
}

/** What a live member is doing. A draining member that serves an invocation is busy. */
export type MemberState = 'idle' | 'busy' | 'draining';

export interface PoolMemberStats {
  pid: number;
  state: MemberState;
  runs: number;
  rssMb: number | undefined;
  /** Proportional set size in MB, when `stats({pss: true})` asked for it and the platform reports it (Linux). */
  pssMb: number | undefined;
  busy: boolean;
  draining: boolean;
  retained: number;
}

/** Why the pool lost a member. */
export interface PoolEnds {
  /** Idle past `pool.idleTimeoutMs`, beyond `pool.minWorkers` and the spares. */
  reaped: number;
  /** Worn: `pool.recycleAfterRuns` runs, or `pool.maxRssMb` of resident memory. */
  recycled: number;
  /** Ended because of its run: a spin or a timeout, the CPU bound, a memory or heap cap, a cancel. */
  killed: number;
  /** Ended on its own: a crash, or a signal from outside. */
  died: number;
}

export interface PoolStats {
  members: PoolMemberStats[];
  /** Live members by state, and the processes still starting. */
  states: Record<MemberState | 'starting', number>;
  /** Processes still starting (as `states.starting`). */
  starting: number;
  /** Executions and invocations waiting for a process. */
  queued: number;
  /** The bound in force: its default depends on the host's memory. */
  maxWorkers: number;
  /** Processes started since construction. */
  spawns: number;
  /** Processes ended since construction, by why (not counting `dispose`). */
  ends: PoolEnds;
}

export interface PoolStatsOptions {
  /** Read each member's PSS (about a millisecond per member on Linux). Default false. */
  pss?: boolean | undefined;
}

export type PoolSettings = Pick<
  IsolateSettings,
  | 'maxWorkers'
  | 'minWorkers'
  | 'spare'
  | 'idleTimeoutMs'
  | 'maxStarting'
  | 'maxQueue'
  | 'recycleAfterRuns'
  | 'maxRssMb'
  | 'maxNestedRuns'
>;

type EndCause = keyof PoolEnds | 'disposed';

/** What the pool knows of one member. Only the pool writes it. */
interface Member {
  readonly process: SandboxProcess;
  /** Runs completed in it (executions and invocations). */
  runs: number;
  /** The ids of the retained executions it holds. */
  readonly retained: Set<string>;
  /** Reserved for one run, from `acquire` to `release`. */
  busy: boolean;
  /** Its run is a nested one admitted beyond `maxWorkers`. */
  overshoot: boolean;
  /** No new executions: it is being ended but still holds retained executions. */
  draining: boolean;
  /** Its process is gone; the state stays until the run that was in it is released. */
  ended: boolean;
  /** When it last became idle (`performance.now()`). */
  idleSince: number;
  /** Why the pool ended it, or is ending it once its retained executions are closed. */
  endCause: EndCause | undefined;
}

export class Pool {
  readonly #settings: PoolSettings;
  readonly #launch: () => Promise<SandboxProcess>;
  /** Every member not yet both ended and released. */
  readonly #members = new Map<SandboxProcess, Member>();
  readonly #launching = new Set<Promise<unknown>>();
  /** Idle members, the longest idle first: served from the end, reaped from the start. */
  #idle: Member[] = [];
  #waiters: Waiter[] = [];
  /** Waiters any member can serve (not an invocation of a retained execution). */
  #untargetedWaiters = 0;
  /** Waiters started from a tool call of a running execution. */
  #nestedWaiters = 0;
  /** Runs within `maxWorkers`. */
  #busy = 0;
  /** Nested runs admitted beyond `maxWorkers`. */
  #overshoot = 0;
  #reapTimer: NodeJS.Timeout | undefined;
  #spawns = 0;
  readonly #ends: PoolEnds = { reaped: 0, recycled: 0, killed: 0, died: 0 };
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
    nested = false,
  ): Promise<SandboxProcess> {
    if (this.#disposed) return Promise.reject(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    if (cancel?.signal.aborted) return Promise.reject(cancel.error());
    const { maxWorkers, maxNestedRuns } = this.#settings;
    // No slot within maxWorkers, and the nested runs beyond it at their cap: waiting could be
    // waiting on its own parent, so it is refused instead.
    if (nested && this.#busy >= maxWorkers && this.#overshoot + this.#nestedWaiters >= maxNestedRuns)
      return Promise.reject(new ExecutorError('LIMIT_EXCEEDED', isolateText.nestedLimit(maxNestedRuns)));
    this.#started = true;
    return new Promise<SandboxProcess>((settleResolve, settleReject) => {
      // A waiter leaves the queue when its caller aborts; once served or failed, it stops listening.
      const withdraw = () => {
        if (this.#removeWaiter(waiter)) settleReject(cancel!.error());
      };
      const stopListening = () => cancel?.signal.removeEventListener('abort', withdraw);
      const waiter: Waiter = {
        settled: false,
        nested,
        resolve: (process) => {
          stopListening();
          settleResolve(process);
        },
        reject: (error) => {
          stopListening();
          settleReject(error);
        },
      };
      if (target !== undefined) {
        waiter.target = target.process;
        waiter.lost = target.lost;
      } else this.#untargetedWaiters += 1;
      if (waiter.nested) this.#nestedWaiters += 1;
      this.#waiters.push(waiter);
      this.#pump();
      // The queue is what waits beyond the slots maxWorkers still has free.
      const freeSlots = Math.max(0, this.#settings.maxWorkers - this.#busy);
      if (!waiter.settled && this.#waiters.length - freeSlots > this.#settings.maxQueue) {
        this.#removeWaiter(waiter);
        waiter.reject(
          new ExecutorError('QUEUE_FULL', isolateText.queueFull(this.#settings.maxQueue), { retryable: true }),
        );
        return;
      }
      if (!waiter.settled) cancel?.signal.addEventListener('abort', withdraw, { once: true });
      // Served or not, the spares and the waiters are covered again.
      this.#ensureCapacity();
    });
  }

  release(process: SandboxProcess, fate: ProcessFate): void {
    const member = this.#members.get(process);
    if (member === undefined || !member.busy) return;
    member.busy = false;
    if (member.overshoot) this.#overshoot -= 1;
    else this.#busy -= 1;
    member.overshoot = false;
    member.runs += 1;
    if (member.ended) {
      this.#members.delete(process);
    } else if (fate === 'dead') {
      // Its end is handled by #ended.
    } else if (this.#disposed) {
      this.#end(member, 'disposed');
    } else if (fate === 'kill') {
      this.#end(member, 'killed');
    } else if (fate === 'retire') {
      this.#retire(member, 'killed');
    } else if (member.retained.size > 0) {
      // One execution per process: the one it retains keeps it, for its handle calls alone.
      this.#retire(member, 'recycled');
    } else if (this.#worn(member)) {
      this.#retire(member, 'recycled');
    } else if (member.draining) {
      if (member.retained.size === 0) this.#end(member, member.endCause ?? 'recycled');
    } else {
      member.idleSince = performance.now();
      this.#idle.push(member);
    }
    this.#pump();
    this.#ensureCapacity();
    this.#scheduleReap();
  }

  /** The run just settled holds a retained execution: the process is not recycled under it. */
  retain(process: SandboxProcess, executionId: string): void {
    this.#members.get(process)?.retained.add(executionId);
  }

  /** A retained execution was closed; a draining process whose last one it was can go now. */
  closeRetained(process: SandboxProcess, executionId: string): void {
    const member = this.#members.get(process);
    if (member === undefined) return;
    member.retained.delete(executionId);
    if (member.draining && !member.busy && member.retained.size === 0) this.#end(member, member.endCause ?? 'recycled');
  }

  stats(options: PoolStatsOptions = {}): PoolStats {
    const states = { starting: this.#launching.size, idle: 0, busy: 0, draining: 0 };
    const members = this.#live().map((member): PoolMemberStats => {
      const state: MemberState = member.busy ? 'busy' : member.draining ? 'draining' : 'idle';
      states[state] += 1;
      const { process } = member;
      return {
        pid: process.pid,
        state,
        runs: member.runs,
        rssMb: process.rssMb(),
        pssMb: options.pss === true ? pssMb(process.pid) : undefined,
        busy: member.busy,
        draining: member.draining,
        retained: member.retained.size,
      };
    });
    return {
      members,
      states,
      starting: this.#launching.size,
      queued: this.#waiters.length,
      maxWorkers: this.#settings.maxWorkers,
      spawns: this.#spawns,
      ends: { ...this.#ends },
    };
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    clearTimeout(this.#reapTimer);
    const waiters = this.#waiters;
    this.#waiters = [];
    this.#untargetedWaiters = 0;
    this.#nestedWaiters = 0;
    for (const waiter of waiters) {
      waiter.settled = true;
      waiter.reject(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    }
    await Promise.allSettled([...this.#launching]);
    const members = this.#live();
    for (const member of members) this.#end(member, 'disposed');
    await Promise.all(members.map((member) => member.process.ended));
  }

  /** The members whose process is still there. */
  #live(): Member[] {
    return [...this.#members.values()].filter((member) => !member.ended);
  }

  /** Whether it can take runs: neither draining nor being ended. */
  #serving(member: Member): boolean {
    return !member.ended && !member.draining && member.process.alive;
  }

  #worn(member: Member): boolean {
    if (member.runs >= this.#settings.recycleAfterRuns) return true;
    const rss = member.process.rssMb();
    return rss !== undefined && rss > this.#settings.maxRssMb;
  }

  /** Ends it now, or, while it holds retained executions, once the last is closed. */
  #retire(member: Member, cause: EndCause): void {
    if (member.retained.size === 0) {
      this.#end(member, cause);
      return;
    }
    member.draining = true;
    member.endCause ??= cause;
  }

  #end(member: Member, cause: EndCause): void {
    member.endCause ??= cause;
    member.process.kill();
  }

  #removeWaiter(waiter: Waiter): boolean {
    const at = this.#waiters.indexOf(waiter);
    if (at < 0) return false;
    this.#waiters.splice(at, 1);
    waiter.settled = true;
    if (waiter.target === undefined) this.#untargetedWaiters -= 1;
    if (waiter.nested) this.#nestedWaiters -= 1;
    return true;
  }

  /** The next idle member that can still serve, from the most recently used. */
  #takeIdle(): Member | undefined {
    for (;;) {
      const member = this.#idle.pop();
      if (member === undefined || this.#serving(member)) return member;
    }
  }

  #pump(): void {
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters[i]!;
      const target = waiter.target;
      const targetMember = target === undefined ? undefined : this.#members.get(target);
      if (target !== undefined && (targetMember === undefined || targetMember.ended)) {
        this.#removeWaiter(waiter);
        waiter.reject(waiter.lost!());
        continue;
      }
      const overshoot = this.#busy >= this.#settings.maxWorkers;
      if (overshoot && !(waiter.nested && this.#overshoot < this.#settings.maxNestedRuns)) {
        // Only a nested waiter further on could still be served.
        if (this.#nestedWaiters === 0) return;
        i += 1;
        continue;
      }
      let member: Member | undefined;
      if (targetMember === undefined) member = this.#takeIdle();
      else if (!targetMember.busy) {
        member = targetMember;
        const at = this.#idle.indexOf(targetMember);
        if (at >= 0) this.#idle.splice(at, 1);
      }
      if (member === undefined) {
        i += 1;
        continue;
      }
      this.#removeWaiter(waiter);
      member.busy = true;
      member.overshoot = overshoot;
      if (overshoot) this.#overshoot += 1;
      else this.#busy += 1;
      waiter.resolve(member.process);
    }
  }

  /**
   * Spawns, at most `maxStarting` at once, until the busy members, the runnable waiters and the
   * spares are covered, and `minWorkers`; never beyond `maxWorkers` plus the spares.
   */
  #ensureCapacity(): void {
    if (this.#disposed || !this.#started) return;
    let active = this.#launching.size;
    let busyActive = 0;
    for (const member of this.#members.values()) {
      if (!this.#serving(member)) continue;
      active += 1;
      if (member.busy) busyActive += 1;
    }
    const { maxWorkers, minWorkers, spare, maxStarting, maxNestedRuns } = this.#settings;
    const nestedRunnable = Math.min(this.#nestedWaiters, Math.max(0, maxNestedRuns - this.#overshoot));
    const runnable = Math.min(this.#untargetedWaiters, Math.max(0, maxWorkers - this.#busy) + nestedRunnable);
    const ceiling = maxWorkers + this.#overshoot + nestedRunnable + spare;
    const desired = Math.min(ceiling, Math.max(minWorkers, busyActive + runnable + spare));
    for (; active < desired && this.#launching.size < maxStarting; active += 1) this.#spawn();
  }

  #spawn(): void {
    const launching = this.#launch().then(
      (process) => {
        this.#launching.delete(launching);
        if (this.#disposed) {
          process.kill();
          return;
        }
        this.#spawns += 1;
        const member: Member = {
          process,
          runs: 0,
          retained: new Set(),
          busy: false,
          overshoot: false,
          draining: false,
          ended: false,
          idleSince: performance.now(),
          endCause: undefined,
        };
        this.#members.set(process, member);
        this.#idle.push(member);
        void process.ended.then((end) => this.#ended(member, end));
        this.#pump();
        this.#ensureCapacity();
        this.#scheduleReap();
      },
      (error: unknown) => {
        this.#launching.delete(launching);
        // Nothing alive or coming can serve the waiters: fail them rather than let them wait.
        // No respawn from here, so a broken installation does not spin; the next call retries.
        if (this.#live().length === 0 && this.#launching.size === 0) {
          const failed = this.#waiters;
          this.#waiters = [];
          this.#untargetedWaiters = 0;
          this.#nestedWaiters = 0;
          for (const waiter of failed) {
            waiter.settled = true;
            waiter.reject(error);
          }
        }
      },
    );
    this.#launching.add(launching);
  }

  #ended(member: Member, end: ProcessEnd): void {
    member.ended = true;
    const cause = member.endCause ?? (end.intended ? 'killed' : 'died');
    if (cause !== 'disposed') this.#ends[cause] += 1;
    if (!member.busy) this.#members.delete(member.process);
    const at = this.#idle.indexOf(member);
    if (at >= 0) this.#idle.splice(at, 1);
    this.#pump();
    this.#ensureCapacity();
    this.#scheduleReap();
  }

  /** Idle members beyond the floor: `minWorkers`, and the spares beyond the busy members. */
  #aboveFloor(): boolean {
    let busy = 0;
    let idle = 0;
    for (const member of this.#members.values()) {
      if (!this.#serving(member)) continue;
      if (member.busy) busy += 1;
      else idle += 1;
    }
    const { minWorkers, spare } = this.#settings;
    return idle > 0 && busy + idle + this.#launching.size > Math.max(minWorkers, busy + spare);
  }

  /** The idle member that has waited longest and holds no retained execution (which it would lose). */
  #reapCandidate(): Member | undefined {
    return this.#idle.find((member) => member.retained.size === 0 && this.#serving(member));
  }

  /** One timer, for the longest-idle candidate's deadline, while the pool is above its floor. */
  #scheduleReap(): void {
    if (this.#disposed || this.#reapTimer !== undefined) return;
    const oldest = this.#reapCandidate();
    if (oldest === undefined || !this.#aboveFloor()) return;
    const due = oldest.idleSince + this.#settings.idleTimeoutMs - performance.now();
    this.#reapTimer = setTimeout(
      () => {
        this.#reapTimer = undefined;
        this.#reap();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(due))),
    );
    // An idle pool must not keep the host's event loop alive (see loop-hold.ts).
    this.#reapTimer.unref();
  }

  #reap(): void {
    const now = performance.now();
    for (;;) {
      const oldest = this.#reapCandidate();
      if (oldest === undefined || now - oldest.idleSince < this.#settings.idleTimeoutMs || !this.#aboveFloor()) break;
      this.#idle.splice(this.#idle.indexOf(oldest), 1);
      this.#end(oldest, 'reaped');
    }
    this.#scheduleReap();
  }
}
