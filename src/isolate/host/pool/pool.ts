/**
 * The pool of workerd processes, elastic. One run per process at a time, or at the tenant level
 * (`runsPerMember` above 1, member-sharing.ts) up to that many runs of one tenant. It grows on demand to
 * `maxWorkers` busy processes, a start for every waiting run at once (capacity.ts `startsNow`),
 * at most `maxStarting` at a time, so a burst does not spend every core on spawning, and on to a
 * burst's peak while the burst lasts (`nextPeak`), so the next burst finds its members; it keeps
 * `spare` warm processes beyond the busy ones, so a replacement never waits for a spawn; and it
 * reaps a process idle for `idleTimeoutMs`, down to `minWorkers` (and the spares). A bounded
 * queue holds the runs waiting beyond `maxWorkers`. It decides which process serves whom, and when
 * a process ends: after a kill, a death, `recycleAfterRuns` runs, `maxRssMb` of resident memory,
 * or idleness. It grows only within `memoryBudgetMb`, by what the members measure
 * (memory-budget.ts): beyond it, programs wait; members grown past it end.
 *
 * A process that holds a retained execution never takes another execution: it drains, serving
 * only that execution's handle calls, and ends once the execution is closed. A run started from a
 * tool call of a running execution (nested) may be admitted beyond `maxWorkers`, up to
 * `maxNestedRuns` such runs, so it never waits on the slot its parent holds.
 *
 * A tenant's runs (a daemon's client, tenancy.ts) are held to its share of the budget while
 * another tenant is present; when one within its share waits for memory, another tenant's
 * retained executions over its share are evicted, or else that tenant's newest run ends.
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
import { type DemandPeak, idleAboveFloor, membersWanted, nextPeak, type PoolCounts, startsNow } from './capacity.js';
import type { PoolClock } from './clock.js';
import { graverFate, membersForWaiters, type RunTenant, sharingGroup } from './member-sharing.js';
import { type BudgetOverrun, MemoryBudget } from './memory-budget.js';
import { type EndCause, isServing, type Member, type PoolEnds, type PoolProcess } from './pool-member.js';
import type { PoolSettings } from './pool-settings.js';
import { type PoolStats, type PoolStatsOptions, poolStats } from './pool-stats.js';
import { Reaper } from './reaper.js';
import { Roster } from './roster.js';
import { RunSlots } from './run-slots.js';
import { serveWaiters } from './serve-waiters.js';
import type { EvictionCause, ShareReclaim, TenantFrame } from './tenancy.js';
import { WaiterQueue } from './waiter-queue.js';

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
  /**
   * Closes the retained executions that process holds, so that it ends: a tenant over its share
   * of the memory budget holds them while another tenant's run waits for memory (tenancy.ts).
   */
  evict: (sandbox: P, cause: EvictionCause) => void;
  /**
   * Told before the pool ends a busy member so that another tenant's run can have memory: its
   * tenant holds more than its share, and this is that tenant's newest run (tenancy.ts).
   */
  reclaim: (sandbox: P, reclaim: ShareReclaim) => void;
}

export class Pool<P extends PoolProcess> {
  readonly #settings: PoolSettings;
  readonly #launch: () => Promise<P>;
  readonly #clock: PoolClock;
  readonly #retainedOn: (sandbox: P) => number;
  readonly #overBudget: (sandbox: P, overrun: BudgetOverrun) => void;
  readonly #evict: (sandbox: P, cause: EvictionCause) => void;
  readonly #reclaim: (sandbox: P, reclaim: ShareReclaim) => void;
  /** Members ended for another tenant's run that have not exited yet: their memory is still counted. */
  #reclaiming = 0;
  readonly #budget: MemoryBudget<P>;
  readonly #roster = new Roster<P>();
  readonly #waiters = new WaiterQueue<P>();
  readonly #slots: RunSlots;
  readonly #reaper: Reaper<P>;
  #spawns = 0;
  /** The most members wanted recently: the pool grows to it (capacity.ts `nextPeak`). */
  #peak: DemandPeak | undefined;
  readonly #ends: PoolEnds = { reaped: 0, recycled: 0, killed: 0, died: 0 };
  #started = false;
  #disposed = false;

  constructor(deps: PoolDeps<P>) {
    this.#settings = deps.settings;
    this.#launch = deps.launch;
    this.#clock = deps.clock;
    this.#retainedOn = deps.retainedOn;
    this.#overBudget = deps.overBudget;
    this.#evict = deps.evict;
    this.#reclaim = deps.reclaim;
    this.#slots = new RunSlots(deps.settings);
    this.#budget = new MemoryBudget(deps.clock, deps.settings.memoryBudgetMb, {
      live: () => this.#roster.live(),
      starting: () => this.#roster.starting,
      measure: deps.measure,
      sampled: () => {
        this.#holdGoneToShare();
        this.#endOverBudget();
        // The readings may have moved a tenant below its share: its waiters are served now.
        this.#pump();
      },
    });
    this.#reaper = new Reaper(deps.clock, deps.settings.idleTimeoutMs, {
      // The idle member that has waited longest and holds no retained execution (which it would lose).
      candidate: () =>
        this.#roster.longestIdle((member) => this.#retainedOn(member.process) === 0 && isServing(member)),
      aboveFloor: () => idleAboveFloor(this.#counts(), this.#settings),
      reap: (member) => {
        this.#roster.unpark(member);
        this.#end(member, 'reaped');
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
    this.#started = true;
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
      this.#ensureCapacity();
    });
  }

  /**
   * Hands back a process one of its runs is over with; what becomes of it, once its last run is
   * over, is after-run.ts's, by the gravest verdict of its runs.
   */
  release(sandbox: P, fate: ProcessFate): void {
    const member = this.#roster.get(sandbox);
    if (member === undefined || !member.busy) return;
    member.runs += 1;
    member.running -= 1;
    if (member.running > 0) {
      // Others still run in it: no new run joins a condemned member, and it is dealt with after the
      // last; a wedged one ('kill') ends now, or the others would wait in it for their own bounds.
      member.heldFate = graverFate(member.heldFate, fate);
      if (fate === 'kill' && !member.ended) this.#end(member, 'killed');
      this.#pump();
      this.#ensureCapacity();
      return;
    }
    const gravest = graverFate(member.heldFate, fate);
    member.heldFate = 'keep';
    member.group = undefined;
    this.#slots.give(member);
    const after = afterRun(gravest, member.ended ? 'ended' : this.#disposed ? 'disposing' : 'serving');
    switch (after.do) {
      case 'forget':
        this.#roster.forget(sandbox);
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
    this.#ensureCapacity();
    this.#reaper.schedule();
  }

  /** A retained execution in that process was closed; a draining process whose last one it was can go now. */
  retainedClosed(sandbox: P): void {
    const member = this.#roster.get(sandbox);
    if (member === undefined) return;
    if (member.draining && !member.busy && this.#retainedOn(sandbox) === 0)
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
    await Promise.allSettled(this.#roster.launches());
    const members = this.#roster.live();
    for (const member of members) this.#end(member, 'disposed');
    await Promise.all(members.map((member) => member.process.ended));
  }

  #counts(): PoolCounts {
    return {
      starting: this.#roster.starting,
      ...this.#roster.servingCounts(),
      untargetedWaiters:
        this.#settings.runsPerMember === 1
          ? this.#waiters.untargeted
          : membersForWaiters(this.#waiters, this.#settings.runsPerMember),
      nestedWaiters: this.#waiters.nested,
      busy: this.#slots.busy,
      overshoot: this.#slots.overshoot,
    };
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
    const overShare = this.#shareCheck();
    // With the budget spent, nested runs go first: each frees the member its parent holds.
    if (this.#waiters.nested > 0 && this.#budget.room() === 0)
      serveWaiters(this.#waiters, this.#roster, this.#slots, true, overShare, this.#settings);
    serveWaiters(this.#waiters, this.#roster, this.#slots, false, overShare, this.#settings);
    // Only tenants' runs (a daemon's) can starve for another tenant's retained executions.
    if (this.#waiters.tenanted > 0 && this.#budget.room() === 0) this.#relieve(overShare);
  }

  /**
   * Whether a tenant holds its share of the budget while another tenant is present: its members
   * (busy for it, or holding its retained executions) at their last readings, summed once per pump.
   */
  #shareCheck(): (tenant: TenantFrame) => boolean {
    let held: Map<string, number> | undefined;
    return ({ key, tenancy }) => {
      if (tenancy.size - (tenancy.has(key) ? 1 : 0) === 0) return false;
      held ??= this.#budget.heldByTenant(this.#roster.live());
      return (held.get(key) ?? 0) >= this.#budget.shareMb(tenancy.memoryShare);
    };
  }

  /**
   * A tenant within its share waits for memory while retained executions of a tenant over its
   * share (or gone) hold it: the largest of those members is evicted, and its end lets the pool
   * grow again. However recently they were used, so renewing them cannot pin the budget.
   */
  #relieve(overShare: (tenant: TenantFrame) => boolean): void {
    let starving: TenantFrame | undefined;
    for (let i = 0; i < this.#waiters.length && starving === undefined; i += 1) {
      const waiter = this.#waiters.at(i)!;
      if (waiter.target === undefined && waiter.tenant !== undefined && !overShare(waiter.tenant))
        starving = waiter.tenant;
    }
    if (starving === undefined) return;
    let largest: Member<P> | undefined;
    for (const member of this.#roster.live()) {
      const holder = member.tenant;
      if (member.busy || holder === undefined || holder.key === starving.key) continue;
      if (this.#retainedOn(member.process) === 0) continue;
      if (holder.tenancy.has(holder.key) && !overShare(holder)) continue;
      if ((member.memory?.privateMb ?? 0) >= (largest?.memory?.privateMb ?? -1)) largest = member;
    }
    if (largest !== undefined) this.#evict(largest.process, 'starving');
    else this.#reclaimFor(starving, overShare);
  }

  /**
   * No retained execution to evict: the newest run of a tenant over its share (or gone) ends, with
   * a text naming the rule, so runs a tenant started while it was alone, and may hold for as long
   * as its tools take, cannot stall a tenant that arrives. One at a time: the next only once the
   * last has exited and its memory is counted out, and not while a process starts (the waiter may
   * get it).
   */
  #reclaimFor(starving: TenantFrame, overShare: (tenant: TenantFrame) => boolean): void {
    if (this.#reclaiming > 0 || this.#roster.starting > 0) return;
    let newest: Member<P> | undefined;
    for (const member of this.#roster.live()) {
      const holder = member.tenant;
      if (!member.busy || member.reclaimed || holder === undefined || holder.key === starving.key) continue;
      if (holder.tenancy.has(holder.key) && !overShare(holder)) continue;
      if (member.servedAt > (newest?.servedAt ?? -1)) newest = member;
    }
    if (newest === undefined) return;
    const { key, tenancy } = newest.tenant!;
    newest.reclaimed = true;
    this.#reclaiming += 1;
    this.#reclaim(newest.process, {
      heldMb: this.#budget.heldByTenant(this.#roster.live()).get(key) ?? 0,
      shareMb: this.#budget.shareMb(tenancy.memoryShare),
      percent: Math.round(tenancy.memoryShare * 100),
    });
    this.#end(newest, 'killed');
  }

  /**
   * Retained executions whose tenant has gone (its connections closed) are held to its share at
   * every reading, whether or not anyone else is present: past it, the largest are evicted, so a
   * client that retains and disconnects cannot pin the budget for their idle time-to-live.
   */
  #holdGoneToShare(): void {
    const live = this.#roster.live();
    const byGone = new Map<string, { tenant: TenantFrame; members: Member<P>[] }>();
    for (const member of live) {
      const holder = member.tenant;
      if (member.busy || holder === undefined || holder.tenancy.has(holder.key)) continue;
      if (this.#retainedOn(member.process) === 0) continue;
      const entry = byGone.get(holder.key) ?? { tenant: holder, members: [] };
      entry.members.push(member);
      byGone.set(holder.key, entry);
    }
    if (byGone.size === 0) return;
    const held = this.#budget.heldByTenant(live);
    for (const [key, { tenant, members }] of byGone) {
      let heldMb = held.get(key) ?? 0;
      const shareMb = this.#budget.shareMb(tenant.tenancy.memoryShare);
      members.sort((a, b) => (b.memory?.privateMb ?? 0) - (a.memory?.privateMb ?? 0));
      for (const member of members) {
        if (heldMb <= shareMb) break;
        heldMb -= member.memory?.privateMb ?? 0;
        this.#evict(member.process, 'gone');
      }
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

  /**
   * Spawns what the growth rule says (`startsNow`): up to the recent peak of `membersWanted`,
   * within the budget and `maxStarting`.
   */
  #ensureCapacity(): void {
    if (this.#disposed || !this.#started) return;
    const counts = this.#counts();
    const moment = {
      wanted: membersWanted(counts, this.#settings),
      now: this.#clock.now(),
      busyOrWaiting: counts.servingBusy + counts.untargetedWaiters > 0,
    };
    this.#peak = nextPeak(this.#peak, moment, this.#settings.idleTimeoutMs);
    const { wanted } = this.#peak;
    if (counts.starting + counts.serving >= wanted || counts.starting >= this.#settings.maxStarting) return;
    let room = this.#budget.room();
    // A nested run frees the member its parent holds, so it never waits on its parent for memory:
    // it may use the budget's last tenth, and beyond it one member is always starting for it
    // (should members then pass the budget, the largest ends).
    if (counts.nestedWaiters > 0) room = Math.max(room, this.#budget.room(1), counts.starting === 0 ? 1 : 0);
    const { starting, serving } = counts;
    const spawns = startsNow({ wanted, starting, serving, room, maxStarting: this.#settings.maxStarting });
    for (let i = 0; i < spawns; i += 1) this.#spawn();
  }

  #spawn(): void {
    const launching = this.#launch().then(
      (sandbox) => {
        this.#roster.launched(launching);
        if (this.#disposed) {
          sandbox.kill();
          return;
        }
        this.#spawns += 1;
        const member = this.#roster.join(sandbox, this.#clock.now());
        this.#budget.measureNew(member);
        void sandbox.ended.then((end) => this.#ended(member, end));
        this.#pump();
        this.#ensureCapacity();
        this.#reaper.schedule();
        this.#budget.schedule();
      },
      (error: unknown) => {
        this.#roster.launched(launching);
        // Nothing alive or coming can serve the waiters: fail them rather than let them wait.
        // No respawn from here, so a broken installation does not spin; the next call retries.
        if (this.#roster.live().length === 0 && this.#roster.starting === 0) this.#waiters.failAll(error);
      },
    );
    this.#roster.launching(launching);
  }

  #ended(member: Member<P>, end: { intended: boolean }): void {
    member.ended = true;
    if (member.reclaimed) this.#reclaiming -= 1;
    this.#budget.changed();
    const cause = member.endCause ?? (end.intended ? 'killed' : 'died');
    if (cause !== 'disposed') this.#ends[cause] += 1;
    if (!member.busy) this.#roster.forget(member.process);
    this.#roster.unpark(member);
    this.#pump();
    this.#ensureCapacity();
    this.#reaper.schedule();
  }
}
