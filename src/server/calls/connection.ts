/**
 * One client connection: its bound on concurrent executions, the log line and the metrics of each
 * execution, every refusal, and the cancellation of a running call: by the client (its cancel
 * token), because the client went away, or because the client stopped being heard for longer
 * than its heartbeat lease (by then the client has told its caller the connection broke).
 */

import { descriptorFaultOf } from '../../isolate/daemon.js';
import type { RetainedIdle, Tenancy } from '../../isolate/index.js';
import { ExecutorError } from '../../protocol/errors.js';
import type { ExecuteResult, Executor } from '../../protocol/types.js';
import { resultToWire } from '../../wire/results.js';
import { DRAINING_REFUSAL } from '../../wire/texts.js';
import type { WireExecuteResult } from '../../wire/types.js';
import type { ModuleCache } from '../modules/module-cache.js';
import type { LogSink } from '../observe/log.js';
import type { DaemonMetrics, DropCause, ExecutionOutcome } from '../observe/metrics.js';
import type { Readiness } from '../observe/readiness.js';
import type { RefusalLog } from '../observe/refusal-log.js';
import type { RetainedLeases } from '../retained/retained-leases.js';
import {
  CLIENT_GONE,
  type ExecutionKind,
  formatClientDropped,
  formatConnectionClosed,
  formatDuplicateCancelToken,
  formatExecutionCancelled,
  formatExecutionRefused,
  formatExecutionSettled,
  formatLeaseExpired,
  formatResultTooDeep,
  formatTooManyExecutions,
} from '../texts.js';
import type { HeldRequests } from './held-requests.js';
import { exceedsWireDepth, MAX_WIRE_DEPTH } from './result-depth.js';

/** Who a connection's calls count against (executor-server.ts says how each is chosen). */
export interface ConnectionTenant {
  /** For the tenant's share of the memory budget (tenancy.ts). */
  share: string;
  /** For retained executions, which outlive the connection: its token. */
  retained: string;
}

/** What every connection shares with the server. */
export interface ServerContext {
  readonly executor: Executor;
  readonly protocolVersion: number;
  readonly maxExecutionsPerConnection: number;
  /** The bytes of requests in flight, against their bounds per connection and for the daemon. */
  readonly heldRequests: HeldRequests;
  /** The tenants of the executor's memory budget: each call passes its tenant's frame (`share`). */
  readonly tenancy: Tenancy;
  readonly retained: RetainedLeases;
  /** The daemon's idle bound on what a call retains, passed with each call to the executor that keeps its timer. */
  readonly retainedIdle: RetainedIdle;
  /** The modules each tenant sent once, by hash (module-cache.ts). */
  readonly modules: ModuleCache;
  readonly draining: boolean;
  /** Names this daemon in the handle ids it gives out (handle-ids.ts). */
  readonly daemonId: string;
  readonly metrics: DaemonMetrics;
  /** Learns from each execution whether the executor can still start a sandbox. */
  readonly readiness: Readiness;
  log: LogSink;
  /** Where refused calls are logged: a flood of them is summed up, not written line by line. */
  readonly refusals: RefusalLog;
  /** Counts an execution in flight for the drain; the returned function settles it. */
  track(): () => void;
}

interface Running {
  execution: number;
  kind: ExecutionKind;
  /** Aborted by the client's `cancel(token)`, when the client goes away, or at the end of the drain. */
  controller: AbortController;
  /** Why the daemon gave the call up itself: the cancellation line stands in for the settled one. */
  givenUp: string | undefined;
  /** What the client is told instead of the executor's cancellation text, when the daemon has a better one. */
  toClient: ((kind: ExecutionKind) => string) | undefined;
}

/** What a call carries that the connection reads before running it. */
interface CallTerms {
  cancelToken?: string | undefined;
  heartbeatLease?: number | undefined;
  /** What the request holds in the daemon until it settles (request-bytes.ts); none when absent. */
  heldBytes?: number | undefined;
  /** The trace the client's call belongs to, which its log line names. */
  traceId?: string | undefined;
}

export class Connection {
  readonly id: number;
  readonly server: ServerContext;
  readonly tenant: ConnectionTenant;
  #executions = 0;
  /** Bytes its requests in flight hold (held-requests.ts). */
  #heldBytes = 0;
  readonly #running = new Set<Running>();
  /** Running calls the client may cancel, by the token it chose; tokens are per connection. */
  readonly #byCancelToken = new Map<string, Running>();
  #ended = false;
  /** Why the daemon dropped the client: a message that arrives with the drop runs nothing. */
  #dropped: string | undefined;
  /** Drops the client (closes its socket) with a reason; the socket's close then ends the connection. */
  readonly #drop: (reason: string) => void;
  /** The client's heartbeat interval plus timeout, once a call has told it. */
  #lease: number | undefined;
  /** `performance.now()` of the client's last message while calls ran: monotonic, so a clock step changes nothing. */
  #lastHeard = performance.now();
  #leaseTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    id: number,
    server: ServerContext,
    drop: (reason: string) => void,
    tenant: ConnectionTenant = { share: `connection ${id}`, retained: 'token 1' },
  ) {
    this.id = id;
    this.server = server;
    this.tenant = tenant;
    this.#drop = drop;
  }

  get running(): number {
    return this.#running.size;
  }

  /** The client is gone (`end` ran). */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Any message from the client: it is alive, unless it arrives after a silence past the lease.
   * Then the client has counted the session broken (this daemon was frozen, say, and reads what
   * waited in its socket only now), and the client is dropped: its calls are given up, and this
   * message, and any that follow it before the socket closes, run nothing.
   * Checked here as well as on a timer, since a daemon that wakes reads its sockets before it runs
   * its timers.
   */
  heard(): void {
    const now = performance.now();
    const lease = this.#lease;
    if (lease !== undefined && this.#running.size > 0 && now - this.#lastHeard >= lease) {
      this.dropClient('heartbeat_lease', formatLeaseExpired(lease));
      return;
    }
    this.#lastHeard = now;
  }

  /** Logs and counts a call refused before it ran, and returns the error to throw. */
  refuse(kind: ExecutionKind, error: ExecutorError): ExecutorError {
    this.server.refusals.refused(
      `connection ${this.id} ${error.code}`,
      formatExecutionRefused(this.id, kind, error.message),
    );
    this.server.metrics.executionSettled(kind, 'refused');
    return error;
  }

  /**
   * Runs one execution under the connection's bounds. `signal` aborts when the client cancels the
   * call through its cancel token, goes away or outlives its lease; an executor that takes it as
   * `execute(request, { signal })` can release the sandbox at once. Registration is synchronous,
   * so a `cancel` that follows the call on the socket finds it.
   */
  async run(
    kind: ExecutionKind,
    terms: CallTerms,
    body: (signal: AbortSignal) => Promise<ExecuteResult>,
  ): Promise<WireExecuteResult> {
    const { cancelToken, heartbeatLease, heldBytes = 0 } = terms;
    if (cancelToken !== undefined && this.#byCancelToken.has(cancelToken)) {
      throw this.refuse(kind, new ExecutorError('INVALID_REQUEST', formatDuplicateCancelToken(cancelToken)));
    }
    if (this.#dropped !== undefined) throw this.refuse(kind, new ExecutorError('EXECUTION_CANCELLED', this.#dropped));
    if (this.server.draining) {
      throw this.refuse(kind, new ExecutorError('EXECUTOR_DISPOSED', DRAINING_REFUSAL, { retryable: true }));
    }
    const limit = this.server.maxExecutionsPerConnection;
    if (this.#running.size >= limit) {
      throw this.refuse(kind, new ExecutorError('LIMIT_EXCEEDED', formatTooManyExecutions(limit)));
    }
    try {
      this.server.heldRequests.take(this.#heldBytes, heldBytes);
    } catch (error) {
      throw this.refuse(kind, error as ExecutorError);
    }
    this.#heldBytes += heldBytes;
    if (heartbeatLease !== undefined) this.#lease = heartbeatLease;
    // Silence while no call ran is no sign of anything: the lease counts from the first call.
    if (this.#running.size === 0) this.#lastHeard = performance.now();
    this.#executions += 1;
    const running: Running = {
      execution: this.#executions,
      kind,
      controller: new AbortController(),
      givenUp: undefined,
      toClient: undefined,
    };
    this.#running.add(running);
    if (cancelToken !== undefined) this.#byCancelToken.set(cancelToken, running);
    this.#watchLease();
    const settle = this.server.track();
    const started = performance.now();
    let outcome: ExecutionOutcome = 'failed';
    let detail = 'threw';
    try {
      const result = await body(running.controller.signal);
      this.server.readiness.observe(undefined);
      const wire = resultToWire(result);
      if (exceedsWireDepth(wire)) throw new ExecutorError('LIMIT_EXCEEDED', formatResultTooDeep(MAX_WIRE_DEPTH));
      outcome = result.error === undefined ? 'ok' : 'error';
      detail = result.error === undefined ? 'ok' : 'returned an error';
      return wire;
    } catch (error) {
      this.server.readiness.observe(error);
      if (descriptorFaultOf(error) !== undefined) this.server.metrics.descriptorFault('spawn');
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'EXECUTION_CANCELLED') outcome = 'cancelled';
      detail = typeof code === 'string' ? `threw ${code}` : 'threw';
      // The executor says its signal was aborted; the client passed none, so it hears the daemon's reason.
      if (code === 'EXECUTION_CANCELLED' && running.toClient !== undefined) {
        throw new ExecutorError('EXECUTION_CANCELLED', running.toClient(kind), { cause: error });
      }
      throw error;
    } finally {
      this.#heldBytes -= heldBytes;
      this.server.heldRequests.give(heldBytes);
      this.#running.delete(running);
      if (cancelToken !== undefined) this.#byCancelToken.delete(cancelToken);
      if (this.#running.size === 0) this.#unwatchLease();
      settle();
      const seconds = (performance.now() - started) / 1000;
      if (running.givenUp !== undefined) outcome = 'cancelled';
      this.server.metrics.executionSettled(kind, outcome, seconds);
      if (running.givenUp === undefined) {
        this.server.log(
          formatExecutionSettled(this.id, running.execution, kind, detail, Math.round(seconds * 1000), terms.traceId),
        );
      }
    }
  }

  /** The client gave up the call it sent with this token. An unknown (or settled) token is a no-op. */
  cancel(cancelToken: unknown): void {
    if (typeof cancelToken !== 'string') return;
    this.#byCancelToken.get(cancelToken)?.controller.abort();
  }

  /**
   * Gives up every running call, logging why: the daemon's own decision, not the client's.
   * `toClient` words it for a client still there to read it.
   */
  giveUp(why: string, toClient?: (kind: ExecutionKind) => string): void {
    for (const running of this.#running) {
      if (running.givenUp !== undefined) continue;
      running.givenUp = why;
      running.toClient = toClient;
      this.server.log(formatExecutionCancelled(this.id, running.execution, running.kind, why), 'warn');
      running.controller.abort(new Error(why));
    }
  }

  /** The client is gone: cancel what still runs, release what it kept. Idempotent. */
  end(why: string = CLIENT_GONE): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#unwatchLease();
    this.giveUp(why);
    this.server.retained.connectionEnded(this.id);
    this.server.log(formatConnectionClosed(this.id, this.#executions));
  }

  /** Drops the client for a reason of the daemon's: its calls are given up first, then its socket closed. */
  dropClient(cause: DropCause, reason: string): void {
    if (this.#ended || this.#dropped !== undefined) return;
    this.#dropped = reason;
    this.server.log(formatClientDropped(this.id, reason), 'warn');
    this.server.metrics.clientDropped(cause);
    this.giveUp(reason);
    this.#drop(reason);
  }

  #watchLease(): void {
    if (this.#lease === undefined || this.#leaseTimer !== undefined) return;
    const check = (): void => {
      const lease = this.#lease;
      if (lease === undefined || this.#running.size === 0) {
        this.#unwatchLease();
        return;
      }
      const silent = performance.now() - this.#lastHeard;
      if (silent < lease) {
        this.#leaseTimer = setTimeout(check, lease - silent);
        this.#leaseTimer.unref?.();
        return;
      }
      this.#leaseTimer = undefined;
      this.dropClient('heartbeat_lease', formatLeaseExpired(lease));
    };
    this.#leaseTimer = setTimeout(check, this.#lease);
    this.#leaseTimer.unref?.();
  }

  #unwatchLease(): void {
    if (this.#leaseTimer !== undefined) clearTimeout(this.#leaseTimer);
    this.#leaseTimer = undefined;
  }
}
