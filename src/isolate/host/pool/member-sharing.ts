/**
 * The tenant level (`pool.runsPerMember` above 1): one member runs up to that many executions of
 * the same tenant at once, each in a fresh isolate of its own, as Cloudflare runs a tenant's
 * workers as isolates of one process. Executions of different tenants, with no tenant, asking to
 * retain handles, or calling a retained execution never share a member. Pure rules over the
 * pool's members and waiters: the pool (serve-waiters.ts, pool.ts) carries them out.
 *
 * What the level gives up: the process boundary stands between tenants, not between executions,
 * so a spin, a crash or an out-of-memory in one execution may end the others in its member, and a
 * process's memory cap (`pool.memoryLimitMb`) and CPU time are its member's, not one execution's.
 */
import type { ProcessFate } from '../run/run-ending.js';
import { isServing, type Member, type PoolProcess } from './pool-member.js';
import type { PoolSettings } from './pool-settings.js';
import type { TenantFrame } from './tenancy.js';

/** Who a run is for, as the pool reads it. */
export interface RunTenant {
  /** The tenant whose executions may share its member (a request's `tenant`, the daemon's token). */
  key?: string | undefined;
  /** The tenant it counts against for its share of the memory budget (a daemon's client, tenancy.ts). */
  share?: TenantFrame | undefined;
}

/** What a waiter brings to the choice of a member to share. */
export interface SharingWaiter {
  /** The tenant key, where its run may share a member; undefined where it may not. */
  group?: string | undefined;
  tenant?: TenantFrame | undefined;
}

/** How grave a run's verdict on its process is: a member keeps the gravest of its runs' until the last is over. */
const FATE_ORDER: Readonly<Record<ProcessFate, number>> = { keep: 0, retire: 1, kill: 2, killed: 3, dead: 4 };

/** The graver of two verdicts on one process. */
export function graverFate(held: ProcessFate, next: ProcessFate): ProcessFate {
  return FATE_ORDER[next] > FATE_ORDER[held] ? next : held;
}

/** The key a run's member may be shared by: its tenant's, at the tenant level, and for an execution that retains nothing. */
export function sharingGroup(
  settings: Pick<PoolSettings, 'runsPerMember'>,
  tenant: RunTenant | undefined,
  shareable: boolean,
): string | undefined {
  return settings.runsPerMember > 1 && shareable ? tenant?.key : undefined;
}

/**
 * Whether `member` can take one more run for `waiter` without a slot of its own: it runs that
 * tenant's executions (counted against the same share), has room below `runsPerMember`, can still
 * serve, none of its runs has condemned it, and it is not worn by the runs it has started.
 */
export function canJoin<P extends PoolProcess>(
  member: Member<P>,
  waiter: SharingWaiter,
  settings: Pick<PoolSettings, 'runsPerMember' | 'recycleAfterRuns'>,
): boolean {
  return (
    waiter.group !== undefined &&
    member.busy &&
    member.group === waiter.group &&
    member.tenant?.key === waiter.tenant?.key &&
    member.running < settings.runsPerMember &&
    member.heldFate === 'keep' &&
    !member.reclaimed &&
    member.runs + member.running < settings.recycleAfterRuns &&
    isServing(member)
  );
}

/**
 * How many members the waiters any member can serve need: one each, except that at the tenant level
 * a tenant's waiters fill a member `runsPerMember` at a time.
 */
export function membersForWaiters(
  waiters: Iterable<SharingWaiter & { target?: unknown }>,
  runsPerMember: number,
): number {
  let members = 0;
  const byGroup = new Map<string, number>();
  for (const waiter of waiters) {
    if (waiter.target !== undefined) continue;
    if (runsPerMember === 1 || waiter.group === undefined) members += 1;
    else {
      // A member is shared only within one share of the budget too (`canJoin`).
      const key = `${waiter.group}\u0000${waiter.tenant?.key ?? ''}`;
      byGroup.set(key, (byGroup.get(key) ?? 0) + 1);
    }
  }
  for (const count of byGroup.values()) members += Math.ceil(count / runsPerMember);
  return members;
}
