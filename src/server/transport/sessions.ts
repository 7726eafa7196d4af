/**
 * The upgrade, and the sessions it opens: the gate decides on each upgrade request, and a socket it
 * admits becomes one capnweb session (over ws-transport.ts, bounded by rpc-bounds.ts) whose main
 * target is the connection's `ConnectionEndpoint`. The open sessions are kept until their socket
 * closes, so the drain can give up their calls and close them once every answer is sent.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { RpcSession } from 'capnweb';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Tenancy } from '../../isolate/index.js';
import { truncateCloseReason } from '../../wire/inbound-queue.js';
import { Connection, type ConnectionTenant, type ServerContext } from '../calls/connection.js';
import { ConnectionEndpoint } from '../calls/endpoint.js';
import type { DaemonMetrics } from '../observe/metrics.js';
import type { ServerSettings } from '../options/server-options.js';
import { type ExecutionKind, formatConnectionOpened, formatSendBufferExceeded } from '../texts.js';
import { closeSocket, watchLiveness } from './client-socket.js';
import { RpcGuard } from './rpc-bounds.js';
import { peerOf, type SessionGate } from './session-gate.js';
import { WsTransport } from './ws-transport.js';

/** Messages above this are cut by ws itself (close 1009) rather than replaced (oversize.ts). */
function hardCeiling(maxMessageBytes: number): number {
  return Math.max(maxMessageBytes * 2, maxMessageBytes + 1024 * 1024);
}

/** RFC 6455: the endpoint received something that violates its policy. */
const POLICY_VIOLATION = 1008;

/** What the sessions share with the rest of the server. */
export interface SessionParts {
  readonly settings: ServerSettings;
  readonly gate: SessionGate;
  readonly context: ServerContext;
  /** The tenants of the executor's memory budget: a connection joins its share while it is open. */
  readonly tenancy: Tenancy;
  readonly metrics: DaemonMetrics;
  /** Who the calls of connection `connection`, authenticated by token `tokenIndex`, count against. */
  readonly tenantOf: (connection: number, tokenIndex: number) => ConnectionTenant;
}

export class Sessions {
  readonly #parts: SessionParts;
  readonly #wss: WebSocketServer;
  readonly #open = new Map<WebSocket, { session: RpcSession; connection: Connection }>();
  /** Connections opened so far: the next one's number. */
  #connections = 0;

  constructor(parts: SessionParts) {
    this.#parts = parts;
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: hardCeiling(parts.settings.maxMessageBytes) });
  }

  /** Sessions open now. */
  get size(): number {
    return this.#open.size;
  }

  /** The http server's `upgrade`: a request the gate admits becomes a session. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { settings, gate, context, tenancy, metrics, tenantOf } = this.#parts;
    const { maxMessageBytes, maxSendBufferBytes } = settings;
    const tokenIndex = gate.decide(request, socket, { draining: context.draining, open: this.#open.size });
    if (tokenIndex === undefined) return;
    this.#wss.handleUpgrade(request, socket, head, (ws) => {
      gate.settled(request.socket);
      this.#connections += 1;
      const drop = (reason: string) => void closeSocket(ws, POLICY_VIOLATION, truncateCloseReason(reason));
      const connection = new Connection(this.#connections, context, drop, tenantOf(this.#connections, tokenIndex));
      const leave = tenancy.join(connection.tenant.share);
      context.log(formatConnectionOpened(connection.id, peerOf(request.socket)));
      metrics.sessionOpened();
      watchLiveness(ws, settings.clientPingIntervalMs, () => metrics.clientDropped('missed_ping'));
      ws.on('close', () => {
        leave();
        this.#open.delete(ws);
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
      this.#open.set(ws, { session, connection });
    });
  }

  /** Gives up the running calls of every open connection (the drain timed out). */
  giveUp(why: string, toClient: (kind: ExecutionKind) => string): void {
    for (const { connection } of this.#open.values()) connection.giveUp(why, toClient);
  }

  /**
   * Closes every session once its settled calls' answers are sent, so closing loses none. The
   * session's drain also waits for calls still running, so `within` bounds that wait after a give-up.
   */
  async close(within: (work: Promise<void>) => Promise<void>): Promise<void> {
    await Promise.all(
      [...this.#open].map(async ([ws, { session }]) => {
        await within(session.drain().catch(() => {}));
        await closeSocket(ws);
      }),
    );
  }
}
