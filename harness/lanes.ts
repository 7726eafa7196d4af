/**
 * One column's cases, run in the order they are asked for, one at a time, except that a case
 * still running after `longCaseMs` stops holding the lane: it goes on waiting beside the next
 * ones. Most long cases only wait (a 31-second timer, a 5-second timeout), so running the rest
 * meanwhile costs them nothing, while a case that measures time still runs alone with the lane.
 * At most `maxWaiting` cases wait at once; beyond that the lane is held as before.
 */

/** A case still running after this long lets the next one start. */
const LONG_CASE_MS = 2_000;
/** Cases of one column that may wait beside the one running in the lane. */
export const MAX_WAITING_CASES = 4;

interface Queued {
  id: string;
  work: () => Promise<unknown>;
  /** Whatever must be done before it may start (its column opening), which is not its run time. */
  ready: boolean;
  /** Left the lane after `longCaseMs` and runs beside it. */
  waiting?: boolean;
}

export class CaseLane {
  private readonly queue: Queued[] = [];
  /** The case holding the lane, if any. */
  private holder: Queued | undefined;
  /** The holder passed `longCaseMs` while the waiting places were full: it leaves once one frees. */
  private holderOverdue = false;
  private readonly waitingIds: string[] = [];
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly longCaseMs = LONG_CASE_MS,
    private readonly maxWaiting = MAX_WAITING_CASES,
    /** Told each case that ran past `longCaseMs`. */
    private readonly onLong: (id: string) => void = () => {},
  ) {}

  /**
   * Runs `work` once `after` has settled, every case asked for before it has started, and none
   * holds the lane. It takes its place in the order at once, when asked.
   */
  run<T>(id: string, work: () => Promise<T>, after: Promise<unknown> = Promise.resolve()): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const item: Queued = { id, ready: false, work: () => work().then(resolve, reject) };
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
    return this.holder === undefined && this.queue.length === 0;
  }

  private pump(): void {
    if (this.holder === undefined && this.queue[0]?.ready) this.start(this.queue.shift()!);
    if (this.isFree()) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private start(item: Queued): void {
    this.holder = item;
    this.holderOverdue = false;
    const timer = setTimeout(() => {
      if (this.holder !== item) return;
      if (this.waitingIds.length >= this.maxWaiting) this.holderOverdue = true;
      else this.release(item);
    }, this.longCaseMs);
    void item.work().finally(() => {
      clearTimeout(timer);
      if (item.waiting) {
        this.waitingIds.splice(this.waitingIds.indexOf(item.id), 1);
        // A place to wait is free: an overdue holder takes it and frees the lane.
        if (this.holder !== undefined && this.holderOverdue) this.release(this.holder);
      } else {
        this.holder = undefined;
      }
      this.pump();
    });
  }

  /** The holder moves to the waiting cases and the next case may start. */
  private release(item: Queued): void {
    this.onLong(item.id);
    item.waiting = true;
    this.waitingIds.push(item.id);
    this.holder = undefined;
    this.holderOverdue = false;
    this.pump();
  }
}
