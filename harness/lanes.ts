/**
 * One column's cases, started in the order they are asked for. A case whose expectation involves
 * time (harness/timing.ts) holds the lane alone; the others share it, up to `maxTogether` at once,
 * since nothing they check depends on how fast they run, and most of their time is a round trip
 * to a process. A case still running after `longCaseMs` stops holding the lane: it goes on waiting
 * beside the next ones. Most long cases only wait (a 31-second timer, a 5-second timeout), so
 * running the rest meanwhile costs them nothing, while a case that measures time still runs alone
 * with the lane until then. At most `maxWaiting` cases wait at once; beyond that the lane is held
 * as before.
 */

/** A case still running after this long lets the next one start. */
const LONG_CASE_MS = 2_000;
/** Cases of one column that may wait beside the ones holding the lane. */
export const MAX_WAITING_CASES = 4;
/** Cases that involve no time which may hold the lane together. */
export const MAX_CASES_TOGETHER = 3;

interface Queued {
  id: string;
  work: () => Promise<unknown>;
  /** Holds the lane alone: its expectation involves time. */
  alone: boolean;
  /** Whatever must be done before it may start (its column opening), which is not its run time. */
  ready: boolean;
  /** Left the lane after `longCaseMs` and runs beside it. */
  waiting?: boolean;
}

export class CaseLane {
  private readonly queue: Queued[] = [];
  /** The cases holding the lane, in the order they started. */
  private readonly holders: Queued[] = [];
  /** Holders that passed `longCaseMs` while the waiting places were full, oldest first: they leave as places free. */
  private readonly overdue: Queued[] = [];
  private readonly waitingIds: string[] = [];
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly longCaseMs = LONG_CASE_MS,
    private readonly maxWaiting = MAX_WAITING_CASES,
    /** Told each case that ran past `longCaseMs`. */
    private readonly onLong: (id: string) => void = () => {},
    private readonly maxTogether = MAX_CASES_TOGETHER,
  ) {}

  /**
   * Runs `work` once `after` has settled, every case asked for before it has started, and the lane
   * has room for it: none holds it, or, when `alone` is false, fewer than `maxTogether` cases that
   * are not alone either. It takes its place in the order at once, when asked.
   */
  run<T>(id: string, work: () => Promise<T>, after: Promise<unknown> = Promise.resolve(), alone = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const item: Queued = { id, alone, ready: false, work: () => work().then(resolve, reject) };
      this.queue.push(item);
      const start = () => {
        item.ready = true;
        this.pump();
      };
      after.then(start, start);
    });
  }

  /** The cases running past `longCaseMs`, oldest first. */
  get waiting(): readonly string[] {
    return this.waitingIds;
  }

  /** Resolves once nothing is queued and no case holds the lane (cases may still be waiting). */
  whenFree(): Promise<void> {
    if (this.isFree()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isFree(): boolean {
    return this.holders.length === 0 && this.queue.length === 0;
  }

  private hasRoomFor(item: Queued): boolean {
    if (this.holders.length === 0) return true;
    if (item.alone || this.holders.some((holder) => holder.alone)) return false;
    return this.holders.length < this.maxTogether;
  }

  private pump(): void {
    for (let next = this.queue[0]; next?.ready && this.hasRoomFor(next); next = this.queue[0])
      this.start(this.queue.shift()!);
    if (this.isFree()) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private start(item: Queued): void {
    this.holders.push(item);
    const timer = setTimeout(() => {
      if (!this.holders.includes(item)) return;
      if (this.waitingIds.length >= this.maxWaiting) this.overdue.push(item);
      else this.release(item);
    }, this.longCaseMs);
    void item.work().finally(() => {
      clearTimeout(timer);
      if (item.waiting) {
        this.waitingIds.splice(this.waitingIds.indexOf(item.id), 1);
        // A place to wait is free: the oldest overdue holder takes it and frees its share of the lane.
        const next = this.overdue.shift();
        if (next !== undefined) this.release(next);
      } else {
        this.drop(item);
      }
      this.pump();
    });
  }

  /** The item no longer holds the lane, nor waits to leave it. */
  private drop(item: Queued): void {
    this.holders.splice(this.holders.indexOf(item), 1);
    const late = this.overdue.indexOf(item);
    if (late >= 0) this.overdue.splice(late, 1);
  }

  /** A holder moves to the waiting cases, and the next case may start in its place. */
  private release(item: Queued): void {
    this.onLong(item.id);
    this.drop(item);
    item.waiting = true;
    this.waitingIds.push(item.id);
    this.pump();
  }
}
