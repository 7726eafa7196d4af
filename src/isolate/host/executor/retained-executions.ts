/**
 * The retained executions of one IsolateExecutor (`retainHandles`), and their bounds: at most
 * `pool.maxRetained` at once (counting the executions still running that asked to retain), and
 * each closed after `pool.retainedIdleTimeoutMs` without a call, or sooner at the idle bound the
 * call that retained it gave (`IsolateCallOptions.retainedIdle`: a daemon's). Each holds a process
 * of its own, which ends when it is closed. A closed id is remembered for a while, so a later call
 * that names it is told why it is gone.
 *
 * The one owner of retained executions on the host, and of their one idle timer each: the executor
 * holds a `RetainSlot` while a run that asked to retain is in flight, the pool asks `heldBy`
 * whether a process must drain, and a daemon's leases are a view that hears of each close, and
 * why, through `observeClosed`.
 */
import { ExecutorError } from '../../../protocol/errors.js';
import type { OutboundFetch } from '../../../protocol/types.js';
import { isolateText } from '../../host/texts.js';
import type { IsolateSettings } from '../options.js';

/** What a retained execution needs of the process it lives in (a MemberProcess; a fake in unit tests). */
export interface RetainingProcess {
  readonly alive: boolean;
  /** Settles once the process has exited. */
  readonly ended: Promise<unknown>;
}

export interface RetainedExecution<M extends RetainingProcess> {
  readonly member: M;
  /** Its worker's fetches still go to the outbound it was loaded with. */
  readonly outbound: OutboundFetch | null;
  /** Its handle calls in flight; while there are none, it is idle. */
  calls: number;
  /** When its last call settled (`performance.now()`). */
  idleSince: number;
  /** The idle bound it is closed at: the pool's, or the shorter one its call gave. */
  readonly idle: { timeoutMs: number; callerIdle: RetainedIdle | undefined };
  /** Its one idle timer: closes it at `idle` of idleness; none while a call runs. */
  expiry: ReturnType<typeof setTimeout> | undefined;
}

/**
 * A caller's bound on how long what its call retains may go unused, in ms, and the option that
 * sets it, as the texts name it (a daemon's `--retained-idle-timeout-ms`).
 */
export interface RetainedIdle {
  timeoutMs: number;
  option: string;
}

/**
 * Why the executor closed a retained execution on its own: idle past the pool's bound (`idle`) or
 * past the one its call gave (`callerIdle`), lost with its process (`lost`), or evicted for
 * another tenant's memory (`evicted`).
 */
export type RetainedCloseCause = 'idle' | 'callerIdle' | 'lost' | 'evicted';

/** Told the id of each retained execution closed by the executor itself, and why. */
export type RetainedClosedObserver = (executionId: string, cause: RetainedCloseCause) => void;

/**
 * The place of one execution that asked to retain, from its admission until its run settles:
 * `fill` when the run retained it, `free` in any case after (a no-op once filled).
 */
export interface RetainSlot<M extends RetainingProcess> {
  fill(executionId: string, member: M, outbound: OutboundFetch | null): void;
  free(): void;
}

/** How many closed execution ids keep their own text for a later call that names them. */
const CLOSED_IDS_REMEMBERED = 1024;

export class RetainedExecutions<M extends RetainingProcess> {
  readonly #settings: Pick<IsolateSettings, 'maxRetained' | 'retainedIdleTimeoutMs'>;
  /** Releases the execution's worker in its process, and lets the pool end that process. */
  readonly #release: (member: M, executionId: string) => void;
  readonly #byId = new Map<string, RetainedExecution<M>>();
  /** How many live in each process (one, as each holds a process of its own). */
  readonly #perMember = new Map<M, number>();
  /** Executions running that asked to retain: they count against `pool.maxRetained` already. */
  #reserved = 0;
  /** Recently closed execution ids, and what a later call naming one is told. */
  readonly #closed = new Map<string, string>();
  readonly #observers = new Set<RetainedClosedObserver>();

  constructor(
    settings: Pick<IsolateSettings, 'maxRetained' | 'retainedIdleTimeoutMs'>,
    release: (member: M, executionId: string) => void,
  ) {
    this.#settings = settings;
    this.#release = release;
  }

  get size(): number {
    return this.#byId.size;
  }

  /** How long the longest idle one has gone without a call, in ms; 0 when none is idle. */
  oldestIdleMs(): number {
    const now = performance.now();
    let oldest = 0;
    for (const retained of this.#byId.values())
      if (retained.calls === 0) oldest = Math.max(oldest, now - retained.idleSince);
    return Math.round(oldest);
  }

  /** How many retained executions live in that process. */
  heldBy(member: M): number {
    return this.#perMember.get(member) ?? 0;
  }

  /**
   * Counts an execution that asks to retain, until its slot is filled or freed; refused past
   * `pool.maxRetained`. `callerIdle`: the call's own idle bound for it, if it gave one.
   */
  reserve(callerIdle?: RetainedIdle): RetainSlot<M> {
    const { maxRetained } = this.#settings;
    if (this.#byId.size + this.#reserved >= maxRetained)
      throw new ExecutorError('LIMIT_EXCEEDED', isolateText.retainedLimit(maxRetained));
    this.#reserved += 1;
    let open = true;
    /** Gives the reservation back; false when the slot was already filled or freed. */
    const closeReservation = () => {
      if (!open) return false;
      open = false;
      this.#reserved -= 1;
      return true;
    };
    return {
      fill: (executionId, member, outbound) => {
        if (closeReservation()) this.#add(executionId, member, outbound, callerIdle);
      },
      free: () => {
        closeReservation();
      },
    };
  }

  #add(executionId: string, member: M, outbound: OutboundFetch | null, callerIdle: RetainedIdle | undefined): void {
    const poolIdleMs = this.#settings.retainedIdleTimeoutMs;
    // The shorter bound holds; the caller's when the two are equal, so its own close is the one heard.
    const byCaller = callerIdle !== undefined && callerIdle.timeoutMs <= poolIdleMs;
    const retained: RetainedExecution<M> = {
      member,
      outbound,
      calls: 0,
      idleSince: performance.now(),
      idle: byCaller
        ? { timeoutMs: callerIdle.timeoutMs, callerIdle }
        : { timeoutMs: poolIdleMs, callerIdle: undefined },
      expiry: undefined,
    };
    this.#byId.set(executionId, retained);
    this.#perMember.set(member, this.heldBy(member) + 1);
    this.#armExpiry(executionId, retained);
    // Lost with its process: dropped then, so it is not counted and holds nothing of the process.
    void member.ended.then(() => {
      if (this.#byId.get(executionId) === retained)
        this.close(executionId, isolateText.executionLost(executionId), 'lost');
    });
  }

  /** The live execution of that id, or `HANDLE_NOT_FOUND` saying why there is none. */
  find(executionId: string): RetainedExecution<M> {
    const retained = this.#byId.get(executionId);
    if (retained === undefined) {
      const closed = this.#closed.get(executionId) ?? isolateText.executionNotFound(executionId);
      throw new ExecutorError('HANDLE_NOT_FOUND', closed);
    }
    if (!retained.member.alive) {
      this.close(executionId, isolateText.executionLost(executionId), 'lost');
      throw new ExecutorError('HANDLE_NOT_FOUND', isolateText.executionLost(executionId));
    }
    return retained;
  }

  /** A call starts: not idle until the last one settles, when its time-to-live starts again. */
  beginCall(retained: RetainedExecution<M>): void {
    retained.calls += 1;
    clearTimeout(retained.expiry);
  }

  endCall(executionId: string, retained: RetainedExecution<M>): void {
    retained.calls -= 1;
    if (retained.calls === 0 && this.#byId.get(executionId) === retained) this.#armExpiry(executionId, retained);
  }

  /**
   * Closes one: its worker is released and its process ends. `text` is what a later call naming
   * it is told; `cause`: closed by the executor itself, so observers hear of it, and why.
   */
  close(executionId: string, text: string, cause?: RetainedCloseCause): void {
    const retained = this.#byId.get(executionId);
    if (retained === undefined) return;
    this.#byId.delete(executionId);
    const left = this.heldBy(retained.member) - 1;
    if (left > 0) this.#perMember.set(retained.member, left);
    else this.#perMember.delete(retained.member);
    clearTimeout(retained.expiry);
    this.#closed.set(executionId, text);
    if (this.#closed.size > CLOSED_IDS_REMEMBERED) this.#closed.delete(this.#closed.keys().next().value!);
    this.#release(retained.member, executionId);
    if (cause === undefined) return;
    for (const observer of this.#observers) {
      try {
        observer(executionId, cause);
      } catch {
        // An observer's failure is its own.
      }
    }
  }

  /** Closes every retained execution that process holds (evicted), telling observers. */
  evict(member: M, text: (executionId: string) => string): void {
    for (const [executionId, retained] of [...this.#byId])
      if (retained.member === member) this.close(executionId, text(executionId), 'evicted');
  }

  observeClosed(observer: RetainedClosedObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Forgets them all (the executor is disposed, and its processes with it). */
  clear(): void {
    for (const retained of this.#byId.values()) clearTimeout(retained.expiry);
    this.#byId.clear();
    this.#perMember.clear();
  }

  #armExpiry(executionId: string, retained: RetainedExecution<M>): void {
    const { timeoutMs, callerIdle } = retained.idle;
    retained.idleSince = performance.now();
    clearTimeout(retained.expiry);
    retained.expiry = setTimeout(() => {
      if (this.#byId.get(executionId) !== retained || retained.calls > 0) return;
      const text = isolateText.executionExpired(executionId, timeoutMs, callerIdle?.option);
      this.close(executionId, text, callerIdle === undefined ? 'idle' : 'callerIdle');
    }, timeoutMs);
    // A retained execution alone must not keep the host's event loop alive (see loop-hold.ts).
    retained.expiry.unref();
  }
}
