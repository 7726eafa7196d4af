/**
 * How the pool grows: from its first `acquire` on, it starts what the growth rule says (capacity.ts
 * `startsNow`): up to the recent peak of the members wanted, within the memory budget and
 * `maxStarting` at once. A started process joins the roster, and the pool is told (`joined`); a
 * start that fails fails the waiters when nothing alive or coming can serve them.
 */
import { type DemandPeak, membersWanted, nextPeak, type PoolCounts, startsNow } from './capacity.js';
import type { PoolClock } from './clock.js';
import { membersForWaiters } from './member-sharing.js';
import type { MemoryBudget } from './memory-budget.js';
import type { Member, PoolProcess } from './pool-member.js';
import type { PoolSettings } from './pool-settings.js';
import type { Roster } from './roster.js';
import type { RunSlots } from './run-slots.js';
import type { WaiterQueue } from './waiter-queue.js';

/** What growth reads of the pool, and tells it. */
export interface GrowthParts<P extends PoolProcess> {
  settings: PoolSettings;
  /** Starts one process. */
  launch: () => Promise<P>;
  clock: PoolClock;
  roster: Roster<P>;
  waiters: WaiterQueue<P>;
  slots: RunSlots;
  budget: MemoryBudget<P>;
  /** Whether the pool is disposed: nothing more starts, and a process that starts late is killed. */
  disposed: () => boolean;
  /** A started process has joined the roster. */
  joined: (member: Member<P>) => void;
}

export class Growth<P extends PoolProcess> {
  readonly #parts: GrowthParts<P>;
  /** Processes started, over the pool's life. */
  #spawns = 0;
  /** The most members wanted recently: the pool grows to it (capacity.ts `nextPeak`). */
  #peak: DemandPeak | undefined;
  /** Nothing starts before the first `acquire`. */
  #woken = false;

  constructor(parts: GrowthParts<P>) {
    this.#parts = parts;
  }

  get spawns(): number {
    return this.#spawns;
  }

  /** The pool has been asked for a process: from now on it keeps its floor and spares. */
  wake(): void {
    this.#woken = true;
  }

  /** What the growth rule reads: the members by state, the waiters, the slots. */
  counts(): PoolCounts {
    const { settings, roster, waiters, slots } = this.#parts;
    return {
      starting: roster.starting,
      ...roster.servingCounts(),
      untargetedWaiters:
        settings.runsPerMember === 1 ? waiters.untargeted : membersForWaiters(waiters, settings.runsPerMember),
      nestedWaiters: waiters.nested,
      busy: slots.busy,
      overshoot: slots.overshoot,
    };
  }

  /**
   * Starts what the growth rule says (`startsNow`): up to the recent peak of `membersWanted`,
   * within the budget and `maxStarting`.
   */
  ensureCapacity(): void {
    const { settings, clock, budget } = this.#parts;
    if (this.#parts.disposed() || !this.#woken) return;
    const counts = this.counts();
    const moment = {
      wanted: membersWanted(counts, settings),
      now: clock.now(),
      busyOrWaiting: counts.servingBusy + counts.untargetedWaiters > 0,
    };
    this.#peak = nextPeak(this.#peak, moment, settings.idleTimeoutMs);
    const { wanted } = this.#peak;
    if (counts.starting + counts.serving >= wanted || counts.starting >= settings.maxStarting) return;
    let room = budget.room();
    // A nested run frees the member its parent holds, so it never waits on its parent for memory:
    // it may use the budget's last tenth, and beyond it one member is always starting for it
    // (should members then pass the budget, the largest ends).
    if (counts.nestedWaiters > 0) room = Math.max(room, budget.room(1), counts.starting === 0 ? 1 : 0);
    const { starting, serving } = counts;
    const spawns = startsNow({ wanted, starting, serving, room, maxStarting: settings.maxStarting });
    for (let i = 0; i < spawns; i += 1) this.#spawn();
  }

  #spawn(): void {
    const { roster, clock } = this.#parts;
    const launching = this.#parts.launch().then(
      (process) => {
        roster.launched(launching);
        if (this.#parts.disposed()) {
          process.kill();
          return;
        }
        this.#spawns += 1;
        this.#parts.joined(roster.join(process, clock.now()));
      },
      (error: unknown) => {
        roster.launched(launching);
        // Nothing alive or coming can serve the waiters: fail them rather than let them wait.
        // No respawn from here, so a broken installation does not spin; the next call retries.
        if (roster.live().length === 0 && roster.starting === 0) this.#parts.waiters.failAll(error);
      },
    );
    roster.launching(launching);
  }
}
