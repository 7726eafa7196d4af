/**
 * The pool of workerd processes, elastic. One run per process at a time. It grows on demand to
 * `maxWorkers` busy processes, starting at most `maxStarting` at once, so a burst does not spend
 * every core on spawning; it keeps `spare` warm processes beyond the busy ones, so a replacement
 * never waits for a spawn; and it reaps a process idle for `idleTimeoutMs`, down to `minWorkers`
 * (and the spares). A bounded queue holds the runs waiting beyond `maxWorkers`. It decides which
 * process serves whom, and when a process ends: after a kill, a death, `recycleAfterRuns` runs,
 * `maxRssMb` of resident memory, or idleness. It grows only within `memoryBudgetMb`, by what the
 * members measure (memory-budget.ts): beyond it, programs wait; members grown past it end.
 *
 * A process that holds a retained execution never takes another execution: it drains, serving
 * only that execution's handle calls, and ends once the execution is closed. A run started from a
 * tool call of a running execution (nested) may be admitted beyond `maxWorkers`, up to
 * `maxNestedRuns` such runs, so it never waits on the slot its parent holds.
 *
 * This is policy alone: processes come from `launch`, time from `clock`, and which process holds
 * retained executions from `retainedOn` (their one owner is retained-executions.ts).
 */
import { ExecutorError } from '../../protocol/errors.js';
import type { MemberMemory } from '../member/process-memory.js';
import type { ProcessFate } from '../run/run.js';
import { isolateText } from '../texts.js';
import { idleAboveFloor, membersWanted, type PoolCounts } from './capacity.js';
import type { PoolClock } from './clock.js';
import { type EndCause, isServing, type Member, type PoolEnds, type PoolProcess } from './member.js';
import { type BudgetOverrun, MemoryBudget } from './memory-budget.js';
import type { PoolSettings } from './pool-settings.js';
import { type PoolStats, type PoolStatsOptions, poolStats } from './pool-stats.js';
import { Reaper } from './reaper.js';
import { type AcquireCancel, WaiterQueue } from './waiter-queue.js';

export interface PoolDeps<P extends PoolProcess> {
  settings: PoolSettings;
  /** Starts one process; a rejection fails the waiters when nothing else can serve them. */
  launch: () => Promise<P>;
  clock: PoolClock;
  /** How many retained executions live in that process. */
  retainedOn: (sandbox: P) => number;
  /** Reads a process's memory, for the budget; undefined where the platform does not tell. */
  measure: (sandbox: P) => MemberMemory | undefined;
  /**
   * Told before the pool ends a busy member over `memoryBudgetMb`, so its run can end with the
   * budget's text rather than as a death.
   */
  overBudget: (sandbox: P, overrun: BudgetOverrun) => void;
}

export class Pool<P extends PoolProcess> {
  readonly #settings: PoolSettings;
  readonly #launch: () => Promise<P>;
  readonly #clock: PoolClock;
  readonly #retainedOn: (sandbox: P) => number;
  readonly #overBudget: (sandbox: P, overrun: BudgetOverrun) => void;
  readonly #budget: MemoryBudget<P>;
  /** Every member not yet both ended and released. */
  readonly #members = new Map<P, Member<P>>();
  readonly #launching = new Set<Promise<unknown>>();
  /** Idle members, the longest idle first: served from the end, reaped from the start. */
  #idle: Member<P>[] = [];
  readonly #waiters = new WaiterQueue<P>();
  /** Runs within `maxWorkers`. */
  #busy = 0;
  /** Nested runs admitted beyond `maxWorkers`. */
  #overshoot = 0;
  readonly #reaper: Reaper<P>;
  #spawns = 0;
  readonly #ends: PoolEnds = { reaped: 0, recycled: 0, killed: 0, died: 0 };
  #started = false;
  #disposed = false;

  constructor(deps: PoolDeps<P>) {
    this.#settings = deps.settings;
    this.#launch = deps.launch;
    this.#clock = deps.clock;
    this.#retainedOn = deps.retainedOn;
    this.#overBudget = deps.overBudget;
    this.#budget = new MemoryBudget(deps.clock, deps.settings.memoryBudgetMb, {
      live: () => this.#live(),
      starting: () => this.#launching.size,
      measure: deps.measure,
      sampled: () => this.#endOverBudget(),
    });
    this.#reaper = new Reaper(deps.clock, deps.settings.idleTimeoutMs, {
      // The idle member that has waited longest and holds no retained execution (which it would lose).
      candidate: () => this.#idle.find((member) => this.#retainedOn(member.process) === 0 && isServing(member)),
      aboveFloor: () => idleAboveFloor(this.#counts(), this.#settings),
      reap: (member) => {
        this.#idle.splice(this.#idle.indexOf(member), 1);
        this.#end(member, 'reaped');
      },
    });
  }

  /**
   * A process reserved for one run, to hand back with `release`. With a target, that process
   * and no other (a retained execution lives there).
   */
  acquire(target?: { process: P; lost: () => ExecutorError }, cancel?: AcquireCancel, nested = false): Promise<P> {
    if (this.#disposed) return Promise.reject(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    if (cancel?.signal.aborted) return Promise.reject(cancel.error());
    const { maxWorkers, maxNestedRuns, maxQueue } = this.#settings;
    // No slot within maxWorkers, and the nested runs beyond it at their cap: waiting could be
    // waiting on its own parent, so it is refused instead.
    if (nested && this.#busy >= maxWorkers && this.#overshoot + this.#waiters.nested >= maxNestedRuns)
      return Promise.reject(new ExecutorError('LIMIT_EXCEEDED', isolateText.nestedLimit(maxNestedRuns)));
    this.#started = true;
    return new Promise<P>((resolve, reject) => {
      const { waiter, listenForCancel } = this.#waiters.enqueue({ nested, target, cancel }, resolve, reject);
      this.#pump();
      // The queue is what waits beyond the slots maxWorkers still has free.
      const freeSlots = Math.max(0, maxWorkers - this.#busy);
      if (!waiter.settled && this.#waiters.length - freeSlots > maxQueue) {
        this.#waiters.remove(waiter);
        waiter.reject(new ExecutorError('QUEUE_FULL', isolateText.queueFull(maxQueue), { retryable: true }));
        return;
      }
      if (!waiter.settled) listenForCancel();
      // Served or not, the spares and the waiters are covered again.
      this.#ensureCapacity();
    });
  }

  release(sandbox: P, fate: ProcessFate): void {
    const member = this.#members.get(sandbox);
    if (member === undefined || !member.busy) return;
    member.busy = false;
    if (member.overshoot) this.#overshoot -= 1;
    else this.#busy -= 1;
    member.overshoot = false;
    member.runs += 1;
    if (member.ended) {
      this.#members.delete(sandbox);
    } else if (fate === 'dead') {
      // Its end is handled by #ended.
    } else if (this.#disposed) {
      this.#end(member, 'disposed');
    } else if (fate === 'kill') {
      this.#end(member, 'killed');
    } else if (fate === 'retire') {
      this.#retire(member, 'killed');
    } else if (this.#retainedOn(sandbox) > 0) {
      // One execution per process: the one it retains keeps it, for its handle calls alone.
      this.#retire(member, 'recycled');
    } else if (this.#worn(member)) {
      this.#retire(member, 'recycled');
    } else if (member.draining) {
      this.#end(member, member.endCause ?? 'recycled');
    } else {
      member.idleSince = this.#clock.now();
      this.#idle.push(member);
    }
    this.#pump();
    this.#ensureCapacity();
    this.#reaper.schedule();
  }

  /** A retained execution in that process was closed; a draining process whose last one it was can go now. */
  retainedClosed(sandbox: P): void {
    const member = this.#members.get(sandbox);
    if (member === undefined) return;
    if (member.draining && !member.busy && this.#retainedOn(sandbox) === 0)
      this.#end(member, member.endCause ?? 'recycled');
  }

  stats(options: PoolStatsOptions = {}): PoolStats {
    return poolStats(
      {
        live: this.#live(),
        retainedOn: this.#retainedOn,
        starting: this.#launching.size,
        queued: this.#waiters.length,
        maxWorkers: this.#settings.maxWorkers,
        memory: this.#budget.stats(),
        spawns: this.#spawns,
        ends: this.#ends,
      },
      options,
    );
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    this.#reaper.stop();
    this.#budget.stop();
    this.#waiters.failAll(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    await Promise.allSettled([...this.#launching]);
    const members = this.#live();
    for (const member of members) this.#end(member, 'disposed');
    await Promise.all(members.map((member) => member.process.ended));
  }

  /** The members whose process is still there. */
  #live(): Member<P>[] {
    return [...this.#members.values()].filter((member) => !member.ended);
  }

  #counts(): PoolCounts {
    let serving = 0;
    let servingBusy = 0;
    for (const member of this.#members.values()) {
      if (!isServing(member)) continue;
      serving += 1;
      if (member.busy) servingBusy += 1;
    }
    return {
      starting: this.#launching.size,
      serving,
      servingBusy,
      untargetedWaiters: this.#waiters.untargeted,
      nestedWaiters: this.#waiters.nested,
      busy: this.#busy,
      overshoot: this.#overshoot,
    };
  }

  #worn(member: Member<P>): boolean {
    if (member.runs >= this.#settings.recycleAfterRuns) return true;
    const rss = member.process.rssMb();
    return rss !== undefined && rss > this.#settings.maxRssMb;
  }

  /** Ends it now, or, while it holds retained executions, once the last is closed. */
  #retire(member: Member<P>, cause: EndCause): void {
    if (this.#retainedOn(member.process) === 0) {
      this.#end(member, cause);
      return;
    }
    member.draining = true;
    member.endCause ??= cause;
  }

  #end(member: Member<P>, cause: EndCause): void {
    member.endCause ??= cause;
    member.process.kill();
  }

  /** The next idle member that can still serve, from the most recently used. */
  #takeIdle(): Member<P> | undefined {
    for (;;) {
      const member = this.#idle.pop();
      if (member === undefined || isServing(member)) return member;
    }
  }

  /** Serves the waiters, in order, that a member can serve now. */
  #pump(): void {
    // With the budget spent, nested runs go first: each frees the member its parent holds.
    if (this.#waiters.nested > 0 && this.#budget.room() === 0) this.#serve(true);
    this.#serve(false);
  }

  /** Serves the waiters in order (only the nested ones, with `nestedOnly`) that a member can serve now. */
  #serve(nestedOnly: boolean): void {
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters.at(i)!;
      const target = waiter.target;
      const targetMember = target === undefined ? undefined : this.#members.get(target);
      if (target !== undefined && (targetMember === undefined || targetMember.ended)) {
        this.#waiters.remove(waiter);
        waiter.reject(waiter.lost!());
        continue;
      }
      if (nestedOnly && !waiter.nested) {
        i += 1;
        continue;
      }
      const overshoot = this.#busy >= this.#settings.maxWorkers;
      if (overshoot && !(waiter.nested && this.#overshoot < this.#settings.maxNestedRuns)) {
        // Only a nested waiter further on could still be served.
        if (this.#waiters.nested === 0) return;
        i += 1;
        continue;
      }
      let member: Member<P> | undefined;
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
      this.#waiters.remove(waiter);
      member.busy = true;
      member.overshoot = overshoot;
      if (overshoot) this.#overshoot += 1;
      else this.#busy += 1;
      waiter.resolve(member.process);
    }
  }

  /**
   * Members over the budget at the last reading end, the largest first; a busy one's run is told
   * why first. Fewer members may then let the pool grow again.
   */
  #endOverBudget(): void {
    const overrun = this.#budget.overrun();
    if (overrun.length > 0) {
      const usedMb = this.#budget.usedMb();
      for (const member of overrun) {
        if (member.busy)
          this.#overBudget(member.process, {
            usedMb,
            budgetMb: this.#budget.budgetMb,
            memberMb: member.memory?.privateMb ?? 0,
          });
        this.#end(member, member.busy ? 'killed' : 'recycled');
      }
    }
    this.#ensureCapacity();
  }

  /** Spawns, at most `maxStarting` at once, up to what `membersWanted` says and the budget allows. */
  #ensureCapacity(): void {
    if (this.#disposed || !this.#started) return;
    const counts = this.#counts();
    const active = counts.starting + counts.serving;
    const wanted = membersWanted(counts, this.#settings);
    if (active >= wanted || this.#launching.size >= this.#settings.maxStarting) return;
    let room = this.#budget.room();
    // A nested run frees the member its parent holds, so it never waits on its parent for memory:
    // it may use the budget's last tenth, and beyond it one member is always starting for it
    // (should members then pass the budget, the largest ends).
    if (counts.nestedWaiters > 0) room = Math.max(room, this.#budget.room(1), counts.starting === 0 ? 1 : 0);
    const spawns = Math.min(wanted - active, room, this.#settings.maxStarting - this.#launching.size);
    for (let i = 0; i < spawns; i += 1) this.#spawn();
  }

  #spawn(): void {
    const launching = this.#launch().then(
      (sandbox) => {
        this.#launching.delete(launching);
        if (this.#disposed) {
          sandbox.kill();
          return;
        }
        this.#spawns += 1;
        const member: Member<P> = {
          process: sandbox,
          runs: 0,
          busy: false,
          overshoot: false,
          draining: false,
          ended: false,
          idleSince: this.#clock.now(),
          endCause: undefined,
          memory: undefined,
        };
        this.#members.set(sandbox, member);
        this.#budget.measureNew(member);
        this.#idle.push(member);
        void sandbox.ended.then((end) => this.#ended(member, end));
        this.#pump();
        this.#ensureCapacity();
        this.#reaper.schedule();
        this.#budget.schedule();
      },
      (error: unknown) => {
        this.#launching.delete(launching);
        // Nothing alive or coming can serve the waiters: fail them rather than let them wait.
        // No respawn from here, so a broken installation does not spin; the next call retries.
        if (this.#live().length === 0 && this.#launching.size === 0) this.#waiters.failAll(error);
      },
    );
    this.#launching.add(launching);
  }

  #ended(member: Member<P>, end: { intended: boolean }): void {
    member.ended = true;
    this.#budget.changed();
    const cause = member.endCause ?? (end.intended ? 'killed' : 'died');
    if (cause !== 'disposed') this.#ends[cause] += 1;
    if (!member.busy) this.#members.delete(member.process);
    const at = this.#idle.indexOf(member);
    if (at >= 0) this.#idle.splice(at, 1);
    this.#pump();
    this.#ensureCapacity();
    this.#reaper.schedule();
  }
}
