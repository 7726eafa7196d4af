/**
 * The runs waiting for a process, in arrival order, with the counts the pool's admission reads.
 * A waiter leaves the queue when it is served, fails, or is withdrawn: its signal aborts (its run
 * is over, run-ending.ts decided how), and it is rejected with the signal's reason, as a web API
 * rejects with an aborted signal's reason. The queue decides nothing about why.
 */
import type { ExecutorError } from '../../../protocol/errors.js';
import type { TenantFrame } from './tenancy.js';

export interface Waiter<P> {
  resolve(process: P): void;
  reject(error: unknown): void;
  /** Served or failed: no longer in the queue. */
  settled: boolean;
  /** An invocation of a retained execution: only this process can serve it. */
  target?: P;
  /** The error a targeted waiter gets when its process ends first. */
  lost?: () => ExecutorError;
  /** Started from a tool call of a running execution: may run beyond `maxWorkers`. */
  nested: boolean;
  /** The tenant it runs for (a daemon's client), held to its share of the memory budget. */
  tenant?: TenantFrame | undefined;
  /** At the tenant level, the tenant whose members it may share (member-sharing.ts). */
  group?: string | undefined;
}

/** What a run asks the queue for. */
export interface WaiterRequest<P> {
  nested: boolean;
  /** An invocation of a retained execution: that process, and the error when it ends first. */
  target?: { process: P; lost: () => ExecutorError } | undefined;
  /** Withdraws the waiter when it aborts, rejecting it with the signal's reason. */
  signal?: AbortSignal | undefined;
  tenant?: TenantFrame | undefined;
  group?: string | undefined;
}

export class WaiterQueue<P> {
  #waiters: Waiter<P>[] = [];
  /** Waiters any member can serve (not an invocation of a retained execution). */
  #untargeted = 0;
  /** Waiters started from a tool call of a running execution. */
  #nested = 0;
  /** Waiters that run for a tenant (tenancy.ts). */
  #tenanted = 0;

  get length(): number {
    return this.#waiters.length;
  }

  get untargeted(): number {
    return this.#untargeted;
  }

  get nested(): number {
    return this.#nested;
  }

  get tenanted(): number {
    return this.#tenanted;
  }

  /** The waiters in arrival order. */
  [Symbol.iterator](): Iterator<Waiter<P>> {
    return this.#waiters[Symbol.iterator]();
  }

  /** The waiter at `index` in arrival order. */
  at(index: number): Waiter<P> | undefined {
    return this.#waiters[index];
  }

  /**
   * Queues a waiter that settles through `resolve` and `reject`. `listenForWithdrawal`, called
   * while it still waits, lets its signal withdraw it; once served or failed it stops listening.
   */
  enqueue(
    request: WaiterRequest<P>,
    resolve: (process: P) => void,
    reject: (error: unknown) => void,
  ): { waiter: Waiter<P>; listenForWithdrawal: () => void } {
    const { signal, target } = request;
    const withdraw = () => {
      if (this.remove(waiter)) reject(signal!.reason);
    };
    const stopListening = () => signal?.removeEventListener('abort', withdraw);
    const waiter: Waiter<P> = {
      settled: false,
      nested: request.nested,
      tenant: request.tenant,
      group: request.group,
      resolve: (process) => {
        stopListening();
        resolve(process);
      },
      reject: (error) => {
        stopListening();
        reject(error);
      },
    };
    if (target !== undefined) {
      waiter.target = target.process;
      waiter.lost = target.lost;
    }
    this.#push(waiter);
    return { waiter, listenForWithdrawal: () => signal?.addEventListener('abort', withdraw, { once: true }) };
  }

  #push(waiter: Waiter<P>): void {
    if (waiter.target === undefined) this.#untargeted += 1;
    if (waiter.nested) this.#nested += 1;
    if (waiter.tenant !== undefined) this.#tenanted += 1;
    this.#waiters.push(waiter);
  }

  /** Takes it out and marks it settled; false when it had already left. */
  remove(waiter: Waiter<P>): boolean {
    const at = this.#waiters.indexOf(waiter);
    if (at < 0) return false;
    this.#waiters.splice(at, 1);
    waiter.settled = true;
    if (waiter.target === undefined) this.#untargeted -= 1;
    if (waiter.nested) this.#nested -= 1;
    if (waiter.tenant !== undefined) this.#tenanted -= 1;
    return true;
  }

  /** Empties the queue, rejecting every waiter with `error`. */
  failAll(error: unknown): void {
    const failed = this.#waiters;
    this.#waiters = [];
    this.#untargeted = 0;
    this.#nested = 0;
    this.#tenanted = 0;
    for (const waiter of failed) {
      waiter.settled = true;
      waiter.reject(error);
    }
  }
}
