/**
 * Which member serves which waiter: in arrival order, a waiter for a retained execution gets the
 * member that holds it (or its error, once that member is gone), any other the idle member used
 * most recently; each within a slot (run-slots.ts), so a waiter with no slot yet waits while a
 * nested one behind it may still be served. A waiter whose tenant holds its share of the memory
 * budget while another tenant is present (tenancy.ts) waits, and the waiters behind it go first.
 */
import type { Member, PoolProcess } from './pool-member.js';
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
): void {
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
    const slot = slots.slotFor(waiter.nested);
    if (slot === null) {
      // Only a nested waiter further on could still be served.
      if (waiters.nested === 0) return;
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
    if (targetMember === undefined) member.tenant = waiter.tenant;
    member.servedAt = roster.nextServed();
    waiter.resolve(member.process);
  }
}
