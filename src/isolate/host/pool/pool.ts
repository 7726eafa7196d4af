/**
 * The pool of workerd processes, elastic. One run per process at a time, or at the tenant level
 * (`runsPerMember` above 1, member-sharing.ts) up to that many runs of one tenant. It grows on
 * demand (growth.ts: to `maxWorkers` busy processes and a burst's peak, `spare` warm ones beyond,
 * at most `maxStarting` starting at once, within `memoryBudgetMb`), and reaps a process idle for
 * `idleTimeoutMs`, down to `minWorkers` and the spares (reaper.ts). A bounded queue holds the runs
 * waiting beyond `maxWorkers` (waiter-queue.ts), served in order (serve-waiters.ts). It decides
 * when a process ends: after a kill, a death, `recycleAfterRuns` runs, `maxRssMb` of resident
 * memory, idleness, or past the memory budget by what the members measure (memory-budget.ts).
 *
 * A process that holds a retained execution never takes another execution: it drains, serving
 * only that execution's handle calls, and ends once the execution is closed. A run started from a
 * tool call of a running execution (nested) may be admitted beyond `maxWorkers`, up to
 * `maxNestedRuns` such runs, so it never waits on the slot its parent holds. A tenant's runs (a
 * daemon's client) are held to its share of the budget while another tenant is present
 * (share-guard.ts).
 *
 * This is policy alone: processes come from `launch`, time from `clock`, and which process holds
 * retained executions from `retainedOn` (their one owner is the executor's). The pool coordinates
 * the parts of the policy that live beside it, each one job, and decides when a member ends.
 */
import { ExecutorError } from '../../../protocol/errors.js';
import { isolateText } from '../../host/texts.js';
import type { MemberMemory } from '../member/process-memory.js';
import type { ProcessFate } from '../run/run-ending.js';
import { afterRun } from './after-run.js';
import { idleAboveFloor } from './capacity.js';
import type { PoolClock } from './clock.js';
import { Growth } from './growth.js';
import { graverFate, type RunTenant, sharingGroup } from './member-sharing.js';
import { type BudgetOverrun, MemoryBudget } from './memory-budget.js';
import { type EndCause, isServing, type Member, type PoolEnds, type PoolProcess } from './pool-member.js';
import type { PoolSettings } from './pool-settings.js';
import { type PoolStats, type PoolStatsOptions, poolStats } from './pool-stats.js';
import { Reaper } from './reaper.js';
import { Roster } from './roster.js';
import { RunSlots } from './run-slots.js';
import { serveWaiters } from './serve-waiters.js';
import { ShareGuard } from './share-guard.js';
import type { EvictionCause, ShareReclaim } from './tenancy.js';
import { WaiterQueue } from './waiter-queue.js';

export interface PoolDeps<P extends PoolProcess> {
  settings: PoolSettings;
  /** Starts one process; a rejection fails the waiters when nothing else can serve them. */
  launch: () => Promise<P>;
  clock: PoolClock;
  /** How many retained executions live in that process. */
  retainedOn: (process: P) => number;
  /** Reads a process's memory, for the budget; undefined where the platform does not tell. */
  measure: (process: P) => MemberMemory | undefined;
  /**
   * Told before the pool ends a busy member over `memoryBudgetMb`, so its run can end with the
   * budget's text rather than as a death.
   */
  overBudget: (process: P, overrun: BudgetOverrun) => void;
  /**
   * Closes the retained executions that process holds, so that it ends: a tenant over its share
   * of the memory budget holds them while another tenant's run waits for memory (tenancy.ts).
   */
  evict: (process: P, cause: EvictionCause) => void;
  /**
   * Told before the pool ends a busy member so that another tenant's run can have memory: its
   * tenant holds more than its share, and this is that tenant's newest run (tenancy.ts).
   */
  reclaim: (process: P, reclaim: ShareReclaim) => void;
}

export class Pool<P extends PoolProcess> {
  readonly #settings: PoolSettings;
  readonly #clock: PoolClock;
  readonly #retainedOn: (process: P) => number;
  readonly #overBudget: (process: P, overrun: BudgetOverrun) => void;
  readonly #budget: MemoryBudget<P>;
  readonly #roster = new Roster<P>();
  readonly #waiters = new WaiterQueue<P>();
  readonly #slots: RunSlots;
  readonly #reaper: Reaper<P>;
  readonly #growth: Growth<P>;
  readonly #shares: ShareGuard<P>;
  readonly #ends: PoolEnds = { reaped: 0, recycled: 0, killed: 0, died: 0 };
  #disposed = false;

  constructor(deps: PoolDeps<P>) {
    const { settings, clock } = deps;
    this.#settings = settings;
    this.#clock = clock;
    this.#retainedOn = deps.retainedOn;
    this.#overBudget = deps.overBudget;
    this.#slots = new RunSlots(settings);
    this.#budget = new MemoryBudget(clock, settings.memoryBudgetMb, {
      live: () => this.#roster.live(),
      starting: () => this.#roster.starting,
      measure: deps.measure,
      sampled: () => {
        this.#shares.holdGoneToShare();
        this.#endOverBudget();
        // The readings may have moved a tenant below its share: its waiters are served now.
        this.#pump();
      },
    });
    this.#reaper = new Reaper(clock, settings.idleTimeoutMs, {
      // The idle member that has waited longest and holds no retained execution (which it would lose).
      candidate: () =>
        this.#roster.longestIdle((member) => this.#retainedOn(member.process) === 0 && isServing(member)),
      aboveFloor: () => idleAboveFloor(this.#growth.counts(), settings),
      reap: (member) => {
        this.#roster.unpark(member);
        this.#end(member, 'reaped');
      },
    });
    this.#growth = new Growth({
      settings,
      launch: deps.launch,
      clock,
      roster: this.#roster,
      waiters: this.#waiters,
      slots: this.#slots,
      budget: this.#budget,
      disposed: () => this.#disposed,
      joined: (member) => this.#joined(member),
    });
    this.#shares = new ShareGuard(this.#roster, this.#waiters, this.#budget, {
      retainedOn: deps.retainedOn,
      evict: deps.evict,
      reclaim: (member, reclaim) => {
        deps.reclaim(member.process, reclaim);
        this.#end(member, 'killed');
      },
    });
  }

  /**
   * A process reserved for one run, to hand back with `release`. With a target, that process
   * and no other (a retained execution lives there). `signal` withdraws the run from the queue,
   * which then rejects with its reason (why is the run's to say, run-ending.ts). `tenant`: who the
   * run is for; at the tenant level a run that may share (`shareable`: it retains nothing) shares a
   * member with its tenant's.
   */
  acquire(
    target?: { process: P; lost: () => ExecutorError },
    signal?: AbortSignal,
    nested = false,
    tenant?: RunTenant,
    shareable = false,
  ): Promise<P> {
    if (this.#disposed) return Promise.reject(new ExecutorError('EXECUTOR_DISPOSED', isolateText.disposed));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { maxNestedRuns, maxQueue } = this.#settings;
    // No slot, and the nested runs at their cap: waiting could be waiting on its own parent, so
    // it is refused instead.
    if (nested && this.#slots.refusesNested(this.#waiters.nested))
      return Promise.reject(new ExecutorError('LIMIT_EXCEEDED', isolateText.nestedLimit(maxNestedRuns)));
    this.#growth.wake();
    return new Promise<P>((resolve, reject) => {
      const group = target === undefined ? sharingGroup(this.#settings, tenant, shareable) : undefined;
      const { waiter, listenForWithdrawal } = this.#waiters.enqueue(
        { nested, target, signal, tenant: tenant?.share, group },
        resolve,
        reject,
      );
      this.#pump();
      // The queue is what waits beyond the slots maxWorkers still has free.
      if (!waiter.settled && this.#waiters.length - this.#slots.freeWithin() > maxQueue) {
        this.#waiters.remove(waiter);
        waiter.reject(new ExecutorError('QUEUE_FULL', isolateText.queueFull(maxQueue), { retryable: true }));
        return;
      }
      if (!waiter.settled) listenForWithdrawal();
      // Served or not, the spares and the waiters are covered again.
      this.#growth.ensureCapacity();
    });
  }

  /**
   * Hands back a process one of its runs is over with; what becomes of it, once its last run is
   * over, is after-run.ts's, by the gravest verdict of its runs.
   */
  release(process: P, fate: ProcessFate): void {
    const member = this.#roster.get(process);
    if (member === undefined || !member.busy) return;
    member.runs += 1;
    member.running -= 1;
    if (member.running > 0) {
      // Others still run in it: no new run joins a condemned member, and it is dealt with after the
      // last; a wedged one ('kill') ends now, or the others would wait in it for their own bounds.
      member.heldFate = graverFate(member.heldFate, fate);
      if (fate === 'kill' && !member.ended) this.#end(member, 'killed');
      this.#pump();
      this.#growth.ensureCapacity();
      return;
    }
    const gravest = graverFate(member.heldFate, fate);
    member.heldFate = 'keep';
    member.group = undefined;
    this.#slots.give(member);
    const after = afterRun(gravest, member.ended ? 'ended' : this.#disposed ? 'disposing' : 'serving');
    switch (after.do) {
      case 'forget':
        this.#roster.forget(process);
        break;
      case 'awaitEnd':
        break;
      case 'end':
        this.#end(member, after.cause);
        break;
      case 'retire':
        this.#retire(member, after.cause);
        break;
      case 'reuse':
        this.#reuse(member);
        break;
    }
    this.#pump();
    this.#growth.ensureCapacity();
    this.#reaper.schedule();
  }

  /** A retained execution in that process was closed; a draining process whose last one it was can go now. */
  retainedClosed(process: P): void {
    const member = this.#roster.get(process);
    if (member === undefined) return;
    if (member.draining && !member.busy && this.#retainedOn(process) === 0)
      this.#end(member, member.endCause ?? 'recycled');
  }

  stats(options: PoolStatsOptions = {}): PoolStats {
    return poolStats(
      {
        live: this.#roster.live(),
        retainedOn: this.#retainedOn,
        starting: this.#roster.starting,
        queued: this.#waiters.length,
        maxWorkers: this.#settings.maxWorkers,
        memory: this.#budget.stats(),
        spawns: this.#growth.spawns,
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
    await Promise.allSettled(this.#roster.launches());
    const members = this.#roster.live();
    for (const member of members) this.#end(member, 'disposed');
    await Promise.all(members.map((member) => member.process.ended));
  }

  /**
   * Parks a member whose run is over to serve again, or retires it when it is spent: one execution
   * per process (the one it retains keeps it, for its handle calls alone), worn, or draining.
   */
  #reuse(member: Member<P>): void {
    if (this.#retainedOn(member.process) > 0 || this.#worn(member) || member.draining) {
      this.#retire(member, 'recycled');
      return;
    }
    member.tenant = undefined;
    this.#roster.park(member, this.#clock.now());
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

  /** Serves the waiters, in order, that a member can serve now. */
  #pump(): void {
    const overShare = this.#shares.overShare();
    // With the budget spent, nested runs go first: each frees the member its parent holds.
    if (this.#waiters.nested > 0 && this.#budget.room() === 0)
      serveWaiters(this.#waiters, this.#roster, this.#slots, true, overShare, this.#settings);
    serveWaiters(this.#waiters, this.#roster, this.#slots, false, overShare, this.#settings);
    // Only tenants' runs (a daemon's) can starve for another tenant's retained executions.
    if (this.#waiters.tenanted > 0 && this.#budget.room() === 0) this.#shares.relieve(overShare);
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
    this.#growth.ensureCapacity();
  }

  /** A started process has joined: it is measured, watched for its end, and serves the waiters. */
  #joined(member: Member<P>): void {
    this.#budget.measureNew(member);
    void member.process.ended.then((end) => this.#ended(member, end));
    this.#pump();
    this.#growth.ensureCapacity();
    this.#reaper.schedule();
    this.#budget.schedule();
  }

  #ended(member: Member<P>, end: { intended: boolean }): void {
    member.ended = true;
    this.#shares.exited(member);
    this.#budget.changed();
    const cause = member.endCause ?? (end.intended ? 'killed' : 'died');
    if (cause !== 'disposed') this.#ends[cause] += 1;
    if (!member.busy) this.#roster.forget(member.process);
    this.#roster.unpark(member);
    this.#pump();
    this.#growth.ensureCapacity();
    this.#reaper.schedule();
  }
}
