/**
 * The executor daemon as a library: serves any native `Executor` over capnweb on a `ws` server.
 * This is where its parts are made and joined: the listener and the session gate
 * (transport/listener.ts, transport/session-gate.ts), the sessions the upgrade opens, one
 * `ConnectionEndpoint` per connection (transport/sessions.ts), the drain (calls/drain.ts), and
 * optionally an admin listener for health and metrics (observe/admin-server.ts). The CLI (cli.ts)
 * wraps this around an `IsolateExecutor`.
 */
import { hostname } from 'node:os';
import { Tenancy } from '../isolate/index.js';
import { PROTOCOL_VERSION } from '../protocol/version.js';
import type { ConnectionTenant, ServerContext } from './calls/connection.js';
import { Drain } from './calls/drain.js';
import { HeldRequests } from './calls/held-requests.js';
import { ModuleCache } from './modules/module-cache.js';
import { type AdminServer, startAdminServer } from './observe/admin-server.js';
import { DaemonMetrics } from './observe/metrics.js';
import { Readiness } from './observe/readiness.js';
import { RefusalLog } from './observe/refusal-log.js';
import { type ExecutorServerOptions, resolveServerOptions } from './options/server-options.js';
import type { RetainedCounts } from './retained/retained-counts.js';
import { observeRetainedClosed, RetainedLeases } from './retained/retained-leases.js';
import { formatRetainedIdleClosed, RETAINED_IDLE_FLAG } from './texts.js';
import { DescriptorWatch } from './transport/descriptors.js';
import { Listener } from './transport/listener.js';
import { SessionGate } from './transport/session-gate.js';
import { Sessions } from './transport/sessions.js';

export type { ExecutorServerOptions } from './options/server-options.js';
export { SERVER_DEFAULTS } from './options/server-options.js';

export interface ExecutorServer {
  /** `ws://<host>:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The name this daemon puts in the execution ids it gives out. */
  readonly daemonId: string;
  /** The admin listener's `http://<host>:<port>`, when `admin` was set. */
  readonly adminUrl: string | undefined;
  /** Executions in flight, across every connection. */
  readonly running: number;
  /** Retained executions the daemon holds, of open connections and of gone ones (closed at `retainedIdleTimeoutMs`). */
  readonly retained: RetainedCounts;
  /** True from the moment `close()` is called: `/readyz` answers 503, new sessions and executions are refused. */
  readonly draining: boolean;
  readonly metrics: DaemonMetrics;
  /**
   * Graceful stop: refuses new sessions and executions at once, waits up to `drainTimeoutMs` for the
   * running ones (then cancels what is left), sends every answer, closes every socket and the
   * admin listener. Does not dispose the executor.
   */
  close(): Promise<void>;
}

export async function createExecutorServer(options: ExecutorServerOptions): Promise<ExecutorServer> {
  const settings = resolveServerOptions(options);
  const { executor, log } = settings;
  const metrics = new DaemonMetrics(executor);
  const readiness = new Readiness(executor);
  const descriptors = new DescriptorWatch();
  const gate = new SessionGate(settings, log, metrics, descriptors);
  metrics.watchDescriptors(() => ({ open: descriptors.open(gate.sockets), limit: descriptors.limit }));
  const refusals = new RefusalLog(log, 'call');
  const heldRequests = new HeldRequests(settings, (scope) => metrics.heldBytesRefused(scope));
  metrics.watchHeldRequests(heldRequests);
  const tenancy = new Tenancy(settings.tenantMemoryPercent / 100);
  /**
   * Who a connection's calls count against: its token's tenant where the daemon has several
   * tokens, else the connection itself, for the memory budget's share; its token always for
   * retained executions, which outlive the connection.
   */
  const tenantOf = (connection: number, tokenIndex: number): ConnectionTenant => {
    const token = `token ${tokenIndex + 1}`;
    return { share: settings.tokens.length > 1 ? token : `connection ${connection}`, retained: token };
  };
  /** A retained execution closed at the daemon's idle bound: the line and the count an operator reads. */
  const idleClosed = (executionId: string) => {
    log(formatRetainedIdleClosed(executionId, settings.retainedIdleTimeoutMs));
    metrics.retainedIdleClosed();
  };
  // The executor owns each retained execution and its one idle timer, given the daemon's bound with
  // the call (IsolateExecutor); it says when it closes one, and why, and the daemon drops its lease.
  const stopObservingRetained = observeRetainedClosed(executor, (executionId, cause) => {
    retained.close(executionId);
    if (cause === 'callerIdle') idleClosed(executionId);
  });
  const retained = new RetainedLeases({
    maxRetainedPerConnection: settings.maxRetainedPerConnection,
    maxRetainedPerTenant: settings.maxRetainedPerTenant,
    // An executor that does not say so: the lease keeps the idle timer, and closes it there.
    idle:
      stopObservingRetained !== undefined
        ? undefined
        : {
            timeoutMs: settings.retainedIdleTimeoutMs,
            close(executionId) {
              idleClosed(executionId);
              executor.closeHandles(executionId).catch(() => {
                // Already gone at the executor: nothing is held.
              });
            },
          },
  });
  metrics.watchRetained(retained);

  const drain = new Drain(settings.drainTimeoutMs, log);
  let daemonId = settings.daemonId ?? '';
  const context: ServerContext = {
    executor,
    protocolVersion: settings.protocolVersion ?? PROTOCOL_VERSION,
    maxExecutionsPerConnection: settings.maxExecutionsPerConnection,
    heldRequests,
    tenancy,
    retained,
    retainedIdle: { timeoutMs: settings.retainedIdleTimeoutMs, option: RETAINED_IDLE_FLAG },
    modules: new ModuleCache(settings.maxModuleCacheBytes),
    get draining() {
      return drain.draining;
    },
    get daemonId() {
      return daemonId;
    },
    metrics,
    readiness,
    log,
    refusals,
    track: () => drain.track(),
  };
  const sessions = new Sessions({ settings, gate, context, tenancy, metrics, tenantOf });
  const listener = await Listener.open({
    settings,
    gate,
    descriptors,
    metrics,
    log,
    upgrade: (request, socket, head) => sessions.upgrade(request, socket, head),
  });
  daemonId ||= `${hostname()}:${listener.address.port}`;

  let admin: AdminServer | undefined;
  if (settings.admin !== undefined) {
    try {
      admin = await startAdminServer(settings.admin, metrics, () => readiness.state(drain.draining));
    } catch (error) {
      await listener.stop();
      throw error;
    }
    readiness.start();
  }

  let closing: Promise<void> | undefined;
  return {
    url: listener.url,
    host: listener.address.address,
    port: listener.address.port,
    daemonId,
    adminUrl: admin?.url,
    metrics,
    get running() {
      return drain.running;
    },
    get retained() {
      return retained.counts();
    },
    get draining() {
      return drain.draining;
    },
    close() {
      closing ??= (async () => {
        drain.begin();
        await drain.settle((why, toClient) => sessions.giveUp(why, toClient));
        const stopped = listener.stop();
        await sessions.close((work) => drain.within(work));
        listener.closeAllConnections();
        await stopped;
        await readiness.settled();
        gate.flush();
        refusals.flush();
        listener.flush();
        stopObservingRetained?.();
        retained.stop();
        metrics.close();
        await admin?.close();
      })();
      return closing;
    },
  };
}
