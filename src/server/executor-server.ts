/**
 * The executor daemon as a library: serves any native `Executor` over capnweb on a `ws` server.
 * One `ConnectionEndpoint` per connection; the session gate (session-gate.ts) admits a connection
 * before any RPC. Optionally an admin listener for health and metrics (admin-server.ts). The CLI
 * (cli.ts) wraps this around an `IsolateExecutor`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hostname } from 'node:os';
import type { Duplex } from 'node:stream';
import { RpcSession } from 'capnweb';
import { type WebSocket, WebSocketServer } from 'ws';
import { Tenancy } from '../isolate/index.js';
import { PROTOCOL_VERSION } from '../protocol/version.js';
import { truncateCloseReason } from '../wire/inbound-queue.js';
import { type AdminServer, startAdminServer } from './admin-server.js';
import { closeSocket, watchLiveness } from './client-socket.js';
import { Connection, type ConnectionTenant, type ServerContext } from './connection.js';
import { DescriptorWatch } from './descriptors.js';
import { ConnectionEndpoint } from './endpoint.js';
import { HeldRequests } from './held-requests.js';
import { DaemonMetrics } from './metrics.js';
import { ModuleCache } from './module-cache.js';
import { proxiedListener } from './proxy-header.js';
import { Readiness } from './readiness.js';
import { RefusalLog } from './refusal-log.js';
import type { RetainedCounts } from './retained-counts.js';
import { RetainedLeases } from './retained-leases.js';
import { RpcGuard } from './rpc-bounds.js';
import { type ExecutorServerOptions, resolveServerOptions } from './server-options.js';
import { peerOf, SessionGate } from './session-gate.js';
import {
  type ExecutionKind,
  formatAcceptFailed,
  formatConnectionOpened,
  formatDrainCancelledCall,
  formatDrainTimedOut,
  formatPortInUse,
  formatRetainedIdleClosed,
  formatSendBufferExceeded,
  UPGRADE_REQUIRED,
} from './texts.js';
import { WsTransport } from './ws-transport.js';

export type { ExecutorServerOptions } from './server-options.js';
export { SERVER_DEFAULTS } from './server-options.js';

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

/** Messages above this are cut by ws itself (close 1009) rather than replaced (oversize.ts). */
function hardCeiling(maxMessageBytes: number): number {
  return Math.max(maxMessageBytes * 2, maxMessageBytes + 1024 * 1024);
}

/** RFC 6455: the endpoint received something that violates its policy. */
const POLICY_VIOLATION = 1008;
/** How long cancelled executions may take to end after the drain timeout before the stop goes on. */
const GIVE_UP_GRACE_MS = 5_000;

export async function createExecutorServer(options: ExecutorServerOptions): Promise<ExecutorServer> {
  const settings = resolveServerOptions(options);
  const { executor, log, maxMessageBytes, maxSendBufferBytes } = settings;
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
  const retained = new RetainedLeases({
    maxRetainedPerConnection: settings.maxRetainedPerConnection,
    maxRetainedPerTenant: settings.maxRetainedPerTenant,
    retainedIdleTimeoutMs: settings.retainedIdleTimeoutMs,
    closeIdle(executionId) {
      log(formatRetainedIdleClosed(executionId, settings.retainedIdleTimeoutMs));
      metrics.retainedIdleClosed();
      executor.closeHandles(executionId).catch(() => {
        // Already gone at the executor (its own bound, or its member died): nothing is held.
      });
    },
  });
  metrics.watchRetained(retained);
  // An executor that closes retained executions on its own (IsolateExecutor: its idle time-to-live,
  // a lost process) says so, and the daemon drops its record and the outbound stub it kept.
  const stopObservingRetained = observeRetainedClosed(executor, (executionId) => retained.close(executionId));

  let draining = false;
  let running = 0;
  let drained: (() => void) | undefined;
  let connections = 0;
  let daemonId = settings.daemonId ?? '';
  const sessions = new Map<WebSocket, { session: RpcSession; connection: Connection }>();
  const context: ServerContext = {
    executor,
    protocolVersion: settings.protocolVersion ?? PROTOCOL_VERSION,
    maxExecutionsPerConnection: settings.maxExecutionsPerConnection,
    heldRequests,
    tenancy,
    retained,
    modules: new ModuleCache(settings.maxModuleCacheBytes),
    get draining() {
      return draining;
    },
    get daemonId() {
      return daemonId;
    },
    metrics,
    readiness,
    log,
    refusals,
    track() {
      running += 1;
      let settled = false;
      return () => {
        if (settled) return;
        settled = true;
        running -= 1;
        if (running === 0) drained?.();
      };
    },
  };

  const http = createServer((_request, response) => {
    response.writeHead(426, { 'content-type': 'text/plain' }).end(UPGRADE_REQUIRED);
  });
  http.on('connection', (socket: Socket) => gate.admit(socket));
  const wss = new WebSocketServer({ noServer: true, maxPayload: hardCeiling(maxMessageBytes) });

  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const tokenIndex = gate.decide(request, socket, { draining, open: sessions.size });
    if (tokenIndex === undefined) return;
    wss.handleUpgrade(request, socket, head, (ws) => {
      gate.settled(request.socket);
      connections += 1;
      const drop = (reason: string) => void closeSocket(ws, POLICY_VIOLATION, truncateCloseReason(reason));
      const connection = new Connection(connections, context, drop, tenantOf(connections, tokenIndex));
      const leave = tenancy.join(connection.tenant.share);
      log(formatConnectionOpened(connection.id, peerOf(request.socket)));
      metrics.sessionOpened();
      watchLiveness(ws, settings.clientPingIntervalMs, () => metrics.clientDropped('missed_ping'));
      ws.on('close', () => {
        leave();
        sessions.delete(ws);
        metrics.sessionClosed();
        connection.end();
      });
      const guard = new RpcGuard(settings);
      const transport = new WsTransport(ws, { maxMessageBytes, maxSendBufferBytes }, guard, {
        received: (bytes) => {
          connection.heard();
          metrics.received(bytes);
        },
        sent: (bytes) => metrics.sent(bytes),
        overflowed: (buffered) =>
          connection.dropClient('send_buffer', formatSendBufferExceeded(buffered, maxSendBufferBytes)),
        violated: ({ cause, reason }) => connection.dropClient(cause, reason),
      });
      const session = new RpcSession(transport, new ConnectionEndpoint(connection), {
        limits: { maxMessageSize: maxMessageBytes },
      });
      guard.attach(session);
      sessions.set(ws, { session, connection });
    });
  });

  // Behind a proxy that speaks PROXY protocol v2, each connection's header is read before http sees it.
  const listener = settings.proxyProtocol
    ? proxiedListener(
        http,
        { timeout: settings.handshakeTimeoutMs, maxWaiting: settings.maxConnections },
        (socket, reason) => gate.refuseProxyHeader(socket, reason),
      )
    : http;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) =>
      reject(
        portInUse(error)
          ? new Error(formatPortInUse(settings.host, settings.port, '--port', 'port'), { cause: error })
          : error,
      );
    listener.once('error', failed);
    listener.listen(settings.port, settings.host, () => {
      listener.off('error', failed);
      resolve();
    });
  });
  // An accept that finds no descriptor (EMFILE, ENFILE) is emitted on the listener: unheard, it
  // would end the daemon. The open sessions go on; libuv accepts again once descriptors are free.
  const acceptFailures = new RefusalLog(log, 'connection');
  listener.on('error', (error: NodeJS.ErrnoException) => {
    const code = error.code ?? 'an error';
    if (code === 'EMFILE' || code === 'ENFILE') metrics.descriptorFault('accept');
    acceptFailures.refused(`accept ${code}`, formatAcceptFailed(code, descriptors.limit));
  });
  const address = listener.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  daemonId ||= `${hostname()}:${address.port}`;

  let admin: AdminServer | undefined;
  if (settings.admin !== undefined) {
    try {
      admin = await startAdminServer(settings.admin, metrics, () => readiness.state(draining));
    } catch (error) {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      throw error;
    }
    readiness.start();
  }

  let closing: Promise<void> | undefined;
  return {
    url: `ws://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    daemonId,
    adminUrl: admin?.url,
    metrics,
    get running() {
      return running;
    },
    get retained() {
      return retained.counts();
    },
    get draining() {
      return draining;
    },
    close() {
      closing ??= (async () => {
        draining = true;
        /** Set once the drain timeout passed: from then on nothing waits past it. */
        let grace: Promise<void> | undefined;
        if (running > 0) {
          const finished = new Promise<void>((resolve) => (drained = resolve));
          let timer: ReturnType<typeof setTimeout> | undefined;
          const timedOut = new Promise<'timeout'>((resolve) => {
            timer = setTimeout(() => resolve('timeout'), settings.drainTimeoutMs);
          });
          if ((await Promise.race([finished, timedOut])) === 'timeout') {
            const why = formatDrainTimedOut(running, settings.drainTimeoutMs);
            log(why, 'warn');
            const toClient = (kind: ExecutionKind) => formatDrainCancelledCall(kind, settings.drainTimeoutMs);
            for (const { connection } of sessions.values()) connection.giveUp(why, toClient);
            // An executor that ignores its signal still gets a bounded wait, not a hang.
            grace = new Promise((resolve) => setTimeout(resolve, GIVE_UP_GRACE_MS).unref());
            await Promise.race([finished, grace]);
          }
          clearTimeout(timer);
        }
        const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
        // drain() waits until every settled call's answer has been sent, so closing loses none. It
        // also waits for calls still running, so after a give-up it gets no more than the grace.
        await Promise.all(
          [...sessions].map(async ([ws, { session }]) => {
            const drained = session.drain().catch(() => {});
            await (grace === undefined ? drained : Promise.race([drained, grace]));
            await closeSocket(ws);
          }),
        );
        http.closeAllConnections();
        await stopped;
        await readiness.settled();
        gate.flush();
        refusals.flush();
        acceptFailures.flush();
        stopObservingRetained();
        retained.stop();
        metrics.close();
        await admin?.close();
      })();
      return closing;
    },
  };
}

/** Another process holds the port. */
function portInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EADDRINUSE';
}

/** Subscribes to the executor's own closes of retained executions, where it reports them. */
function observeRetainedClosed(executor: object, observer: (executionId: string) => void): () => void {
  const observable = executor as { observeRetainedClosed?: (observer: (executionId: string) => void) => () => void };
  return typeof observable.observeRetainedClosed === 'function' ? observable.observeRetainedClosed(observer) : () => {};
}
