/**
 * Which member serves which waiter: in arrival order, a waiter for a retained execution gets the
 * member that holds it (or its error, once that member is gone), any other the idle member used
 * most recently; each within a slot (run-slots.ts), so a waiter with no slot yet waits while a
 * nested one behind it may still be served. A waiter whose tenant holds its share of the memory
 * budget while another tenant is present (tenancy.ts) waits, and the waiters behind it go first.
 * At the tenant level (member-sharing.ts) a waiter first joins a busy member of its tenant with
 * room, which needs no slot of its own: the member already holds one.
 */
import { canJoin } from './member-sharing.js';
import type { Member, PoolProcess } from './pool-member.js';
import type { PoolSettings } from './pool-settings.js';
import type { Roster } from './roster.js';
import type { RunSlots } from './run-slots.js';
import type { TenantFrame } from './tenancy.js';
import type { WaiterQueue } from './waiter-queue.js';

/** Serves the waiters in order (only the nested ones, with `nestedOnly`) that a member can serve now. */
export function serveWaiters<P extends PoolProcess>(
  waiters: WaiterQueue<P>,
  roster: Roster<P>,
  slots: RunSlots,
  nestedOnly: boolean,
  overShare: (tenant: TenantFrame) => boolean,
  settings: Pick<PoolSettings, 'runsPerMember' | 'recycleAfterRuns'>,
): void {
  // The members a waiter could join, read once: none below the tenant level.
  const shared = settings.runsPerMember > 1 ? roster.live().filter((member) => member.group !== undefined) : [];
  for (let i = 0; i < waiters.length; ) {
    const waiter = waiters.at(i)!;
    const target = waiter.target;
    const targetMember = target === undefined ? undefined : roster.get(target);
    if (target !== undefined && (targetMember === undefined || targetMember.ended)) {
      waiters.remove(waiter);
      waiter.reject(waiter.lost!());
      continue;
    }
    if (nestedOnly && !waiter.nested) {
      i += 1;
      continue;
    }
    const joined = waiter.group === undefined ? undefined : shared.find((member) => canJoin(member, waiter, settings));
    if (joined !== undefined) {
      waiters.remove(waiter);
      joined.running += 1;
      joined.servedAt = roster.nextServed();
      waiter.resolve(joined.process);
      continue;
    }
    const slot = slots.slotFor(waiter.nested);
    if (slot === null) {
      // Only a nested waiter further on, or one joining a member it shares, could still be served.
      if (waiters.nested === 0 && shared.length === 0) return;
      i += 1;
      continue;
    }
    if (targetMember === undefined && waiter.tenant !== undefined && overShare(waiter.tenant)) {
      i += 1;
      continue;
    }
    let member: Member<P> | undefined;
    if (targetMember === undefined) member = roster.takeIdle();
    else if (!targetMember.busy) {
      member = targetMember;
      roster.unpark(targetMember);
    }
    if (member === undefined) {
      i += 1;
      continue;
    }
    waiters.remove(waiter);
    slots.take(member, slot);
    member.running = 1;
    if (targetMember === undefined) {
      member.tenant = waiter.tenant;
      member.group = waiter.group;
      if (member.group !== undefined) shared.push(member);
    }
    member.servedAt = roster.nextServed();
    waiter.resolve(member.process);
  }
}
