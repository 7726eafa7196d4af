/**
 * The pool's slots: how many runs hold a member within `maxWorkers`, and how many nested runs
 * (started from a tool call of a running execution) it admitted beyond it, up to
 * `maxNestedRuns`, so a nested run never waits on the slot its parent holds.
 */
import type { Member, PoolProcess } from './pool-member.js';
import type { PoolSettings } from './pool-settings.js';

/** Where a run goes: within `maxWorkers`, or beyond it as a nested run. */
type Slot = 'within' | 'beyond';

export class RunSlots {
  readonly #settings: Pick<PoolSettings, 'maxWorkers' | 'maxNestedRuns'>;
  /** Runs within `maxWorkers`. */
  #busy = 0;
  /** Nested runs admitted beyond `maxWorkers`. */
  #overshoot = 0;

  constructor(settings: Pick<PoolSettings, 'maxWorkers' | 'maxNestedRuns'>) {
    this.#settings = settings;
  }

  get busy(): number {
    return this.#busy;
  }

  get overshoot(): number {
    return this.#overshoot;
  }

  /** The slots `maxWorkers` still has free. */
  freeWithin(): number {
    return Math.max(0, this.#settings.maxWorkers - this.#busy);
  }

  /**
   * No slot within `maxWorkers`, and the nested runs beyond it (running and `nestedWaiting`) at
   * their cap: a nested run waiting could be waiting on its own parent.
   */
  refusesNested(nestedWaiting: number): boolean {
    return this.#busy >= this.#settings.maxWorkers && this.#overshoot + nestedWaiting >= this.#settings.maxNestedRuns;
  }

  /** The slot a run would take now, or null when it must wait. */
  slotFor(nested: boolean): Slot | null {
    if (this.#busy < this.#settings.maxWorkers) return 'within';
    return nested && this.#overshoot < this.#settings.maxNestedRuns ? 'beyond' : null;
  }

  /** The member is reserved for a run, in that slot. */
  take(member: Member<PoolProcess>, slot: Slot): void {
    member.busy = true;
    member.overshoot = slot === 'beyond';
    if (member.overshoot) this.#overshoot += 1;
    else this.#busy += 1;
  }

  /** The member's run is over: its slot is free. */
  give(member: Member<PoolProcess>): void {
    member.busy = false;
    if (member.overshoot) this.#overshoot -= 1;
    else this.#busy -= 1;
    member.overshoot = false;
  }
}
