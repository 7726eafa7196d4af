/**
 * Admission by measured memory (`pool.memoryBudgetMb`). Every member's memory is read on a timer
 * (and a new member's at once); the pool starts a member only while the members' use, with the
 * one more, fits nine tenths of the budget, so programs beyond it wait in the queue. Should the
 * members grow past the budget anyway, the ones holding the most are named to end, the largest
 * first.
 *
 * A member's use is its private memory; the pages every member maps from the same file (the
 * workerd binary, some 34 MB) are counted once for the pool, as the machine holds them once.
 */
import type { MemberMemory } from '../member/process-memory.js';
import type { PoolClock } from './clock.js';
import type { Member, PoolProcess } from './pool-member.js';

/** How often every member's memory is read, while the pool has members (about 7 µs a member). */
export const MEMORY_SAMPLE_MS = 500;
/** A member not measured yet (still starting) counts as this much: a fresh one measured 8.9 MB. */
const UNMEASURED_MEMBER_MB = 12;
/** The shared pages, before any member has been measured: the binary's, measured at 34 MB. */
const UNMEASURED_SHARED_MB = 40;
/**
 * The part of the budget the pool grows into. The rest is room for members that grow between two
 * readings: growth stops near the budget, and members end only once they are past it.
 */
const ADMISSION_SHARE = 0.9;

/** The pool's memory against its budget, as `stats()` shows it. */
export interface PoolMemoryStats {
  /** `pool.memoryBudgetMb`. */
  budgetMb: number;
  /** The members' use at their last reading, with the ones still starting at their estimate. */
  usedMb: number;
  /** The most `usedMb` has been at a reading since construction. */
  peakMb: number;
}

/** Why a member was ended over the budget: the members' use, the budget, and what it held. */
export interface BudgetOverrun {
  usedMb: number;
  budgetMb: number;
  memberMb: number;
}

/** One member's figures, as the budget's arithmetic reads them. */
export interface MeasuredMember<K> {
  key: K;
  /** Its private memory, or undefined when it has not been read. */
  privateMb: number | undefined;
  sharedMb: number | undefined;
}

/** What the members hold: their private memory (or the estimate), and the largest shared figure read. */
interface MembersTotal {
  count: number;
  privateMb: number;
  sharedMb: number | undefined;
}

function totalOf(members: readonly MeasuredMember<unknown>[]): MembersTotal {
  let privateMb = 0;
  let sharedMb: number | undefined;
  for (const member of members) {
    privateMb += member.privateMb ?? UNMEASURED_MEMBER_MB;
    if (member.sharedMb !== undefined) sharedMb = Math.max(sharedMb ?? 0, member.sharedMb);
  }
  return { count: members.length, privateMb, sharedMb };
}

/** The use in MB: the members' private memory, the ones still starting at the estimate, the shared pages once. */
function usedOf(total: MembersTotal, starting: number): number {
  if (total.count === 0 && starting === 0) return 0;
  return total.privateMb + starting * UNMEASURED_MEMBER_MB + (total.sharedMb ?? UNMEASURED_SHARED_MB);
}

/**
 * How many more members may start at UNMEASURED_MEMBER_MB each, within `share` of the budget.
 * With none live or starting, one: a budget below a single member still serves its programs one
 * at a time.
 */
function membersThatFit(usedMb: number, budgetMb: number, share: number, membersAndStarting: number): number {
  const fit = Math.max(0, Math.floor((share * budgetMb - usedMb) / UNMEASURED_MEMBER_MB));
  return membersAndStarting === 0 ? Math.max(1, fit) : fit;
}

/**
 * Over the budget: the members to end, each the largest over its own share (the budget beside the
 * shared pages, split evenly), until the rest fit. Empty when within it.
 */
function membersOverBudget<K>(members: readonly MeasuredMember<K>[], budgetMb: number): K[] {
  let used = usedOf(totalOf(members), 0);
  if (used <= budgetMb || members.length === 0) return [];
  const shared = used - members.reduce((sum, member) => sum + (member.privateMb ?? UNMEASURED_MEMBER_MB), 0);
  const share = (budgetMb - shared) / members.length;
  const largestFirst = members
    .filter((member) => (member.privateMb ?? 0) > share)
    .sort((a, b) => (b.privateMb ?? 0) - (a.privateMb ?? 0));
  const ending: K[] = [];
  for (const member of largestFirst) {
    if (used <= budgetMb) break;
    ending.push(member.key);
    used -= member.privateMb ?? 0;
  }
  return ending;
}

export interface BudgetHooks<P extends PoolProcess> {
  /** The members whose process is still there. */
  live(): Member<P>[];
  /** Processes still starting. */
  starting(): number;
  /** Reads a member's memory; undefined where the platform does not tell, or it is gone. */
  measure(process: P): MemberMemory | undefined;
  /** After each reading of every member: the pool ends those over the budget, and may grow again. */
  sampled(): void;
}

/** The budget's readings and its timer: one reading of every member each MEMORY_SAMPLE_MS, while there are members. */
export class MemoryBudget<P extends PoolProcess> {
  readonly budgetMb: number;
  readonly #clock: PoolClock;
  readonly #hooks: BudgetHooks<P>;
  #peakMb = 0;
  /** The live members' total since the last reading or change of members: admission asks often. */
  #total: MembersTotal | undefined;
  #cancelTimer: (() => void) | undefined;
  #stopped = false;

  constructor(clock: PoolClock, budgetMb: number, hooks: BudgetHooks<P>) {
    this.#clock = clock;
    this.budgetMb = budgetMb;
    this.#hooks = hooks;
  }

  /** Reads a new member at once, so the next admission counts what it holds. */
  measureNew(member: Member<P>): void {
    this.#measure(member);
    this.#peakMb = Math.max(this.#peakMb, this.usedMb());
  }

  /** A member has ended: the total is counted again when next asked. */
  changed(): void {
    this.#total = undefined;
  }

  /** The members' use now, from their last readings. */
  usedMb(): number {
    return usedOf(this.#membersTotal(), this.#hooks.starting());
  }

  /** How many more members may start within `share` of the budget (by default, the part the pool grows into). */
  room(share = ADMISSION_SHARE): number {
    const starting = this.#hooks.starting();
    const total = this.#membersTotal();
    return membersThatFit(usedOf(total, starting), this.budgetMb, share, total.count + starting);
  }

  /** The part of the budget a tenant may hold at `share` of it, within what the pool grows into. */
  shareMb(share: number): number {
    return share * ADMISSION_SHARE * this.budgetMb;
  }

  /** What each tenant's members hold, from their last readings (one still unread at the estimate). */
  heldByTenant(members: readonly Member<P>[]): Map<string, number> {
    const held = new Map<string, number>();
    for (const member of members) {
      const key = member.tenant?.key;
      if (key === undefined) continue;
      held.set(key, (held.get(key) ?? 0) + (member.memory?.privateMb ?? UNMEASURED_MEMBER_MB));
    }
    return held;
  }

  /** The live members over the budget, the largest first (from their last readings). */
  overrun(): Member<P>[] {
    return membersOverBudget(this.#figures(), this.budgetMb);
  }

  stats(): PoolMemoryStats {
    const usedMb = this.usedMb();
    return { budgetMb: this.budgetMb, usedMb, peakMb: Math.max(this.#peakMb, usedMb) };
  }

  /** Arms the next reading, unless one is armed or there is nothing to read. */
  schedule(): void {
    if (this.#stopped || this.#cancelTimer !== undefined) return;
    if (this.#hooks.live().length === 0 && this.#hooks.starting() === 0) return;
    this.#cancelTimer = this.#clock.schedule(() => {
      this.#cancelTimer = undefined;
      this.#sample();
    }, MEMORY_SAMPLE_MS);
  }

  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
  }

  #sample(): void {
    for (const member of this.#hooks.live()) this.#measure(member);
    this.#peakMb = Math.max(this.#peakMb, this.usedMb());
    this.#hooks.sampled();
    this.schedule();
  }

  #measure(member: Member<P>): void {
    member.memory = this.#hooks.measure(member.process) ?? member.memory;
    this.#total = undefined;
  }

  #membersTotal(): MembersTotal {
    this.#total ??= totalOf(this.#figures());
    return this.#total;
  }

  #figures(): MeasuredMember<Member<P>>[] {
    return this.#hooks.live().map((member) => ({
      key: member,
      privateMb: member.memory?.privateMb,
      sharedMb: member.memory?.sharedMb,
    }));
  }
}
