/**
 * Each tenant held to its share of the memory budget (tenancy.ts), for the pool: whether a tenant
 * holds its share while another is present; when one within its share waits for memory, another
 * tenant's retained executions over its share are evicted, or else that tenant's newest run ends;
 * and retained executions whose tenant has gone are held to its share at every reading. It picks
 * whom; the pool's hooks evict, tell the run and end the member.
 */
import type { MemoryBudget } from './memory-budget.js';
import type { Member, PoolProcess } from './pool-member.js';
import type { Roster } from './roster.js';
import type { EvictionCause, ShareReclaim, TenantFrame } from './tenancy.js';
import type { WaiterQueue } from './waiter-queue.js';

/** Whether a tenant holds its share of the budget while another tenant is present. */
export type OverShare = (tenant: TenantFrame) => boolean;

export interface ShareHooks<P extends PoolProcess> {
  /** How many retained executions live in that process. */
  retainedOn(process: P): number;
  /** Closes the retained executions that process holds, so that it ends. */
  evict(process: P, cause: EvictionCause): void;
  /** Tells the runs in that process why it is ended, and ends it. */
  reclaim(member: Member<P>, reclaim: ShareReclaim): void;
}

export class ShareGuard<P extends PoolProcess> {
  readonly #roster: Roster<P>;
  readonly #waiters: WaiterQueue<P>;
  readonly #budget: MemoryBudget<P>;
  readonly #hooks: ShareHooks<P>;
  /** Members ended for another tenant's run that have not exited yet: their memory is still counted. */
  #reclaiming = 0;

  constructor(roster: Roster<P>, waiters: WaiterQueue<P>, budget: MemoryBudget<P>, hooks: ShareHooks<P>) {
    this.#roster = roster;
    this.#waiters = waiters;
    this.#budget = budget;
    this.#hooks = hooks;
  }

  /**
   * Whether a tenant holds its share of the budget while another tenant is present: its members
   * (busy for it, or holding its retained executions) at their last readings, summed once per
   * check made (one a pump).
   */
  overShare(): OverShare {
    let held: Map<string, number> | undefined;
    return ({ key, tenancy }) => {
      if (tenancy.size - (tenancy.has(key) ? 1 : 0) === 0) return false;
      held ??= this.#budget.heldByTenant(this.#roster.live());
      return (held.get(key) ?? 0) >= this.#budget.shareMb(tenancy.memoryShare);
    };
  }

  /** A member has exited: if it was ended for another tenant's run, the next such end may come. */
  exited(member: Member<P>): void {
    if (member.reclaimed) this.#reclaiming -= 1;
  }

  /**
   * A tenant within its share waits for memory while retained executions of a tenant over its
   * share (or gone) hold it: the largest of those members is evicted, and its end lets the pool
   * grow again. However recently they were used, so renewing them cannot pin the budget.
   */
  relieve(overShare: OverShare): void {
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
      if (this.#hooks.retainedOn(member.process) === 0) continue;
      if (holder.tenancy.has(holder.key) && !overShare(holder)) continue;
      if ((member.memory?.privateMb ?? 0) >= (largest?.memory?.privateMb ?? -1)) largest = member;
    }
    if (largest !== undefined) this.#hooks.evict(largest.process, 'starving');
    else this.#reclaimFor(starving, overShare);
  }

  /**
   * No retained execution to evict: the newest run of a tenant over its share (or gone) ends, with
   * a text naming the rule, so runs a tenant started while it was alone, and may hold for as long
   * as its tools take, cannot stall a tenant that arrives. One at a time: the next only once the
   * last has exited and its memory is counted out, and not while a process starts (the waiter may
   * get it).
   */
  #reclaimFor(starving: TenantFrame, overShare: OverShare): void {
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
    this.#hooks.reclaim(newest, {
      heldMb: this.#budget.heldByTenant(this.#roster.live()).get(key) ?? 0,
      shareMb: this.#budget.shareMb(tenancy.memoryShare),
      percent: Math.round(tenancy.memoryShare * 100),
    });
  }

  /**
   * Retained executions whose tenant has gone (its connections closed) are held to its share at
   * every reading, whether or not anyone else is present: past it, the largest are evicted, so a
   * client that retains and disconnects cannot pin the budget for their idle time-to-live.
   */
  holdGoneToShare(): void {
    const live = this.#roster.live();
    const byGone = new Map<string, { tenant: TenantFrame; members: Member<P>[] }>();
    for (const member of live) {
      const holder = member.tenant;
      if (member.busy || holder === undefined || holder.tenancy.has(holder.key)) continue;
      if (this.#hooks.retainedOn(member.process) === 0) continue;
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
        this.#hooks.evict(member.process, 'gone');
      }
    }
  }
}
