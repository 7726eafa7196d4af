/**
 * The daemon's leases on retained executions: which connection retained each, and the cap on how
 * many one connection holds (`maxRetainedPerConnection`). A lease is a view of the execution the
 * executor owns: the executor holds it, and its one idle timer, which closes it at the daemon's
 * `retainedIdleTimeoutMs` (passed with the call that retains it, `IsolateCallOptions.retainedIdle`)
 * whether or not its connection is still open; the daemon hears of that close, and drops the
 * lease. Only for an executor that cannot tell of its own closes (`observeRetainedClosed`) does
 * the lease keep the idle timer itself (`idle`), and close the execution at the executor.
 * A retained execution's outbound stub is kept here too: capnweb disposes the stubs of a call when
 * it returns, but its functions may fetch again through `invokeHandle`, so the daemon keeps a
 * duplicate (`dup()`) until `closeHandles`, the end of the connection, or the idle close.
 *
 * When a connection ends, its retained executions stay open, so a client that reconnects may still
 * call them (handle calls work from any connection to the daemon), but they lose their outbound
 * stub and no longer count against any connection; the idle time-to-live closes them. They still
 * count against the tenant (the token) that retained them, which holds at most
 * `maxRetainedPerTenant`, so reconnecting to retain more gains a tenant nothing.
 */

import type { RetainedCloseCause } from '../../isolate/index.js';
import type { CompletionGuard } from '../../protocol/dispatch.js';
import type { WireFetch } from '../../wire/types.js';
import type { RetainedCounts } from './retained-counts.js';

/** A capnweb stub: callable, duplicable, disposable. */
export type FetchStub = WireFetch & { dup(): FetchStub; [Symbol.dispose](): void };

/** The outbound stub a retained execution fetches through, with the guard that ends it. */
export interface KeptOutbound {
  stub: FetchStub;
  guard: CompletionGuard;
}

interface Retained {
  /** The connection that retained it; `undefined` once that connection ended. */
  connection: number | undefined;
  /** The tenant (token) that retained it: it counts against it until closed, its connection open or gone. */
  tenant: string;
  outbound: KeptOutbound | undefined;
  /** The idle close, where the lease keeps it (`RetainedSettings.idle`); none while a handle call runs. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Handle calls running on it. */
  calls: number;
}

/** The idle time-to-live a lease keeps itself, for an executor that does not. */
interface LeaseIdle {
  timeoutMs: number;
  /** Closes the execution at the executor: the idle time-to-live passed. */
  close(executionId: string): void;
}

export interface RetainedSettings {
  maxRetainedPerConnection: number;
  maxRetainedPerTenant: number;
  /**
   * Set only for an executor that does not close its retained executions at the daemon's idle
   * bound itself (one without `observeRetainedClosed`); an IsolateExecutor keeps that timer.
   */
  idle?: LeaseIdle | undefined;
}

export class RetainedLeases {
  readonly #settings: RetainedSettings;
  readonly #byExecution = new Map<string, Retained>();
  /** Per connection: retained executions held, and `retainHandles` executes still running. */
  readonly #perConnection = new Map<number, number>();
  /** Per tenant (token): retained executions held, its connections open or gone, and those still running. */
  readonly #perTenant = new Map<string, number>();

  constructor(settings: RetainedSettings) {
    this.#settings = settings;
  }

  get limits(): Pick<RetainedSettings, 'maxRetainedPerConnection' | 'maxRetainedPerTenant'> {
    const { maxRetainedPerConnection, maxRetainedPerTenant } = this.#settings;
    return { maxRetainedPerConnection, maxRetainedPerTenant };
  }

  /** Retained executions open, by whether the connection that retained them is still open. */
  counts(): RetainedCounts {
    let open = 0;
    for (const retained of this.#byExecution.values()) if (retained.connection !== undefined) open += 1;
    return { open, gone: this.#byExecution.size - open };
  }

  /**
   * Takes a place for an execute that asks to retain, before it runs, against its connection and
   * its tenant; which of the two holds its limit when there is none. The returned function gives the place back (the run retained
   * nothing); `keep` takes it over.
   */
  reserve(connection: number, tenant: string): (() => void) | 'connection' | 'tenant' {
    const held = this.#perConnection.get(connection) ?? 0;
    if (held >= this.#settings.maxRetainedPerConnection) return 'connection';
    const tenantHeld = this.#perTenant.get(tenant) ?? 0;
    if (tenantHeld >= this.#settings.maxRetainedPerTenant) return 'tenant';
    this.#perConnection.set(connection, held + 1);
    this.#perTenant.set(tenant, tenantHeld + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#leave(connection);
      this.#leaveTenant(tenant);
    };
  }

  /**
   * Records a retained execution in the place `reserve` took for it (whose release is then not
   * called). `connection` is `undefined` when the connection ended while the execution ran.
   */
  keep(executionId: string, connection: number | undefined, tenant: string, outbound: KeptOutbound | undefined): void {
    this.close(executionId);
    const kept = connection === undefined ? undefined : outbound;
    if (kept !== outbound) dispose(outbound);
    this.#byExecution.set(executionId, {
      connection,
      tenant,
      outbound: kept,
      timer: this.#idleTimer(executionId),
      calls: 0,
    });
  }

  /**
   * A handle call starts on it: it is not idle until the returned function says the call ended,
   * and its idle time counts from then (where the lease keeps the idle timer; else the executor
   * counts its calls itself).
   */
  using(executionId: string): () => void {
    const retained = this.#byExecution.get(executionId);
    if (retained === undefined || this.#settings.idle === undefined) return () => {};
    retained.calls += 1;
    clearTimeout(retained.timer);
    retained.timer = undefined;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      retained.calls -= 1;
      if (retained.calls > 0 || this.#byExecution.get(executionId) !== retained) return;
      retained.timer = this.#idleTimer(executionId);
    };
  }

  /** `closeHandles`, or the idle close: forgets it and releases its outbound stub. */
  close(executionId: string): void {
    const retained = this.#byExecution.get(executionId);
    if (retained === undefined) return;
    this.#byExecution.delete(executionId);
    clearTimeout(retained.timer);
    if (retained.connection !== undefined) this.#leave(retained.connection);
    this.#leaveTenant(retained.tenant);
    dispose(retained.outbound);
  }

  /** The connection ended: its retained executions stay until their idle close, without their outbound stubs. */
  connectionEnded(connection: number): void {
    for (const retained of this.#byExecution.values()) {
      if (retained.connection !== connection) continue;
      retained.connection = undefined;
      dispose(retained.outbound);
      retained.outbound = undefined;
    }
    this.#perConnection.delete(connection);
  }

  /** The server stopped: no timer outlives it. */
  stop(): void {
    for (const retained of this.#byExecution.values()) clearTimeout(retained.timer);
  }

  /** The lease's own idle close, where it keeps one (`RetainedSettings.idle`). */
  #idleTimer(executionId: string): ReturnType<typeof setTimeout> | undefined {
    const idle = this.#settings.idle;
    if (idle === undefined) return undefined;
    const timer = setTimeout(() => {
      if (!this.#byExecution.has(executionId)) return;
      this.close(executionId);
      idle.close(executionId);
    }, idle.timeoutMs);
    timer.unref();
    return timer;
  }

  #leaveTenant(tenant: string): void {
    const held = this.#perTenant.get(tenant) ?? 0;
    if (held <= 1) this.#perTenant.delete(tenant);
    else this.#perTenant.set(tenant, held - 1);
  }

  #leave(connection: number): void {
    const held = this.#perConnection.get(connection);
    if (held === undefined) return;
    if (held <= 1) this.#perConnection.delete(connection);
    else this.#perConnection.set(connection, held - 1);
  }
}

function dispose(outbound: KeptOutbound | undefined): void {
  if (outbound === undefined) return;
  outbound.guard.active = false;
  try {
    outbound.stub[Symbol.dispose]();
  } catch {
    // The session is already gone, and the stub with it.
  }
}

/** Told of each retained execution the executor closed itself, and why (where it says). */
export type ExecutorClosedObserver = (executionId: string, cause: RetainedCloseCause | undefined) => void;

/**
 * Subscribes to the executor's own closes of retained executions; undefined for an executor that
 * does not report them (so the daemon's leases keep their idle timer themselves).
 */
export function observeRetainedClosed(executor: object, observer: ExecutorClosedObserver): (() => void) | undefined {
  const observable = executor as { observeRetainedClosed?: (observer: ExecutorClosedObserver) => () => void };
  return typeof observable.observeRetainedClosed === 'function'
    ? observable.observeRetainedClosed(observer)
    : undefined;
}
