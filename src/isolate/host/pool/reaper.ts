/**
 * Reaping: one timer, for the deadline of the member idle longest, while the pool holds idle
 * members beyond its floor. The pool says which member is the candidate and whether it is above
 * its floor; the reaper says when.
 */
import type { PoolClock } from './clock.js';
import type { Member, PoolProcess } from './pool-member.js';

export interface ReapHooks<P extends PoolProcess> {
  /** The idle member that has waited longest and may be reaped, if any. */
  candidate(): Member<P> | undefined;
  /** Whether the pool holds idle members beyond its floor. */
  aboveFloor(): boolean;
  /** Ends it, as reaped. */
  reap(member: Member<P>): void;
}

export class Reaper<P extends PoolProcess> {
  readonly #clock: PoolClock;
  readonly #idleTimeoutMs: number;
  readonly #hooks: ReapHooks<P>;
  #cancelTimer: (() => void) | undefined;
  #stopped = false;

  constructor(clock: PoolClock, idleTimeoutMs: number, hooks: ReapHooks<P>) {
    this.#clock = clock;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#hooks = hooks;
  }

  /** Arms the timer for the candidate's deadline, unless one is armed or nothing is to reap. */
  schedule(): void {
    if (this.#stopped || this.#cancelTimer !== undefined) return;
    const oldest = this.#hooks.candidate();
    if (oldest === undefined || !this.#hooks.aboveFloor()) return;
    const due = oldest.idleSince + this.#idleTimeoutMs - this.#clock.now();
    this.#cancelTimer = this.#clock.schedule(
      () => {
        this.#cancelTimer = undefined;
        this.#reapDue();
      },
      Math.max(0, Math.ceil(due)),
    );
  }

  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
  }

  #reapDue(): void {
    const now = this.#clock.now();
    for (;;) {
      const oldest = this.#hooks.candidate();
      if (oldest === undefined || now - oldest.idleSince < this.#idleTimeoutMs || !this.#hooks.aboveFloor()) break;
      this.#hooks.reap(oldest);
    }
    this.schedule();
  }
}
