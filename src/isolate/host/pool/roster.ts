/**
 * Who the pool's members are: the processes still starting, every member not yet both ended and
 * released, and the idle ones in the order they became idle. Bookkeeping only: the pool decides
 * who joins, serves, idles and ends; the roster keeps the lists consistent as it does.
 */
import { isServing, type Member, type PoolProcess } from './pool-member.js';

export class Roster<P extends PoolProcess> {
  /** Every member not yet both ended and released. */
  readonly #members = new Map<P, Member<P>>();
  /** Idle members, the longest idle first: served from the end, reaped from the start. */
  readonly #idle: Member<P>[] = [];
  readonly #launching = new Set<Promise<unknown>>();
  #served = 0;

  /** The next number in the order members are given runs. */
  nextServed(): number {
    this.#served += 1;
    return this.#served;
  }

  /** Processes still starting. */
  get starting(): number {
    return this.#launching.size;
  }

  /** The launches in flight, for a dispose to wait on. */
  launches(): Promise<unknown>[] {
    return [...this.#launching];
  }

  launching(launch: Promise<unknown>): void {
    this.#launching.add(launch);
  }

  launched(launch: Promise<unknown>): void {
    this.#launching.delete(launch);
  }

  /** A started process becomes a member, idle since `now`. */
  join(process: P, now: number): Member<P> {
    const member: Member<P> = {
      process,
      runs: 0,
      busy: false,
      running: 0,
      group: undefined,
      heldFate: 'keep',
      overshoot: false,
      draining: false,
      ended: false,
      idleSince: now,
      endCause: undefined,
      memory: undefined,
      tenant: undefined,
      servedAt: 0,
      reclaimed: false,
    };
    this.#members.set(process, member);
    this.#idle.push(member);
    return member;
  }

  get(process: P): Member<P> | undefined {
    return this.#members.get(process);
  }

  /** Its process is ended and its run released: the pool knows it no more. */
  forget(process: P): void {
    this.#members.delete(process);
  }

  /** The members whose process is still there. */
  live(): Member<P>[] {
    return [...this.#members.values()].filter((member) => !member.ended);
  }

  /** The members that can take runs, and of those the busy ones. */
  servingCounts(): { serving: number; servingBusy: number } {
    let serving = 0;
    let servingBusy = 0;
    for (const member of this.#members.values()) {
      if (!isServing(member)) continue;
      serving += 1;
      if (member.busy) servingBusy += 1;
    }
    return { serving, servingBusy };
  }

  /** It has finished a run and waits for the next, from `now`. */
  park(member: Member<P>, now: number): void {
    member.idleSince = now;
    this.#idle.push(member);
  }

  /** The next idle member that can still serve, from the most recently used; off the idle list. */
  takeIdle(): Member<P> | undefined {
    for (;;) {
      const member = this.#idle.pop();
      if (member === undefined || isServing(member)) return member;
    }
  }

  /** Off the idle list, if it is on it. */
  unpark(member: Member<P>): void {
    const at = this.#idle.indexOf(member);
    if (at >= 0) this.#idle.splice(at, 1);
  }

  /** The idle member that has waited longest among those `eligible` says may go. */
  longestIdle(eligible: (member: Member<P>) => boolean): Member<P> | undefined {
    return this.#idle.find(eligible);
  }
}
