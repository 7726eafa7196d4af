/**
 * The executor daemon as a library: serves any native `Executor` over capnweb on a `ws` server.
 * One `ExecutorEndpoint` per connection; the bearer token is checked in the HTTP upgrade, before
 * any RPC. The CLI (cli.ts) wraps this around an `IsolateExecutor`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { RpcSession } from 'capnweb';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Executor } from '../protocol/types.js';
import { PROTOCOL_VERSION } from '../protocol/version.js';
import { isAuthorized, isLoopbackHost } from './auth.js';
import { closeSocket, watchLiveness } from './client-socket.js';
import { Connection, type ServerContext } from './connection.js';
import { ExecutorEndpoint } from './endpoint.js';
import { RetainedOutbounds } from './retained-outbounds.js';
import {
  DRAINING_REFUSED,
  formatConnectionOpened,
  formatConnectionRefused,
  formatInvalidServerOption,
  formatUnsafeBind,
  TOKEN_REFUSED,
  UPGRADE_REQUIRED,
} from './texts.js';
import { WsTransport } from './ws-transport.js';

export interface ExecutorServerOptions {
  /** The native executor every connection shares. The server does not dispose it. */
  executor: Executor;
  /** Default `127.0.0.1`. A non-loopback address needs a `token`. */
  host?: string | undefined;
  /** Default 8787; 0 picks a free port. */
  port?: number | undefined;
  /** The bearer token clients must send as `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Bytes; a larger incoming message fails alone with `LIMIT_EXCEEDED`. Default 16 MiB. */
  maxMessageSize?: number | undefined;
  /** Concurrent executions (and handle calls) per connection; more fail with `LIMIT_EXCEEDED`. Default 16. */
  maxExecutionsPerConnection?: number | undefined;
  /** Milliseconds between WebSocket pings to each client; a client that misses one is dropped. Default 15000. */
  clientPingInterval?: number | undefined;
  /** The version `protocolVersion()` announces. For tests of the mismatch path only. */
  protocolVersion?: number | undefined;
  /** One line per connection and per execution. Default: nothing. */
  log?: ((line: string) => void) | undefined;
}

export interface ExecutorServer {
  /** `ws://<host>:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Executions in flight, across every connection. */
  readonly running: number;
  /**
   * Graceful stop: refuses new connections and executions, waits for the running ones, then closes
   * every socket. Does not dispose the executor.
   */
  close(): Promise<void>;
}

export const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8787,
  maxMessageSize: 16 * 1024 * 1024,
  maxExecutionsPerConnection: 16,
  clientPingInterval: 15_000,
} as const;

/** Messages above this are cut by ws itself (close 1009) rather than replaced (oversize.ts). */
function hardCeiling(maxMessageSize: number): number {
  return Math.max(maxMessageSize * 2, maxMessageSize + 1024 * 1024);
}

function positiveInteger(name: string, value: unknown, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new TypeError(formatInvalidServerOption(name, allowZero ? 'an integer >= 0' : 'an integer >= 1', value));
  }
  return value;
}

function peerOf(request: IncomingMessage): string {
  const { remoteAddress, remotePort } = request.socket;
  return remoteAddress?.includes(':') ? `[${remoteAddress}]:${remotePort}` : `${remoteAddress}:${remotePort}`;
}

function refuseUpgrade(socket: Duplex, status: string): void {
  // A client that resets mid-answer must not crash the daemon with an unhandled 'error'.
  socket.on('error', () => {});
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

export async function createExecutorServer(options: ExecutorServerOptions): Promise<ExecutorServer> {
  const { executor, token } = options;
  const host = options.host ?? SERVER_DEFAULTS.host;
  if (typeof executor !== 'object' || executor === null)
    throw new TypeError(formatInvalidServerOption('executor', 'an Executor', executor));
  if (token !== undefined && (typeof token !== 'string' || token === '')) {
    throw new TypeError(formatInvalidServerOption('token', 'a non-empty string', token));
  }
  if (token === undefined && !isLoopbackHost(host)) throw new Error(formatUnsafeBind(host));
  const port = positiveInteger('port', options.port, SERVER_DEFAULTS.port, true);
  const maxMessageSize = positiveInteger('maxMessageSize', options.maxMessageSize, SERVER_DEFAULTS.maxMessageSize);
  const maxExecutionsPerConnection = positiveInteger(
    'maxExecutionsPerConnection',
    options.maxExecutionsPerConnection,
    SERVER_DEFAULTS.maxExecutionsPerConnection,
  );
  const clientPingInterval = positiveInteger(
    'clientPingInterval',
    options.clientPingInterval,
    SERVER_DEFAULTS.clientPingInterval,
  );
  const log = options.log ?? (() => {});

  let draining = false;
  let running = 0;
  let drained: (() => void) | undefined;
  let connections = 0;
  const sockets = new Map<WebSocket, RpcSession>();
  const context: ServerContext = {
    executor,
    protocolVersion: options.protocolVersion ?? PROTOCOL_VERSION,
    maxExecutionsPerConnection,
    retained: new RetainedOutbounds(),
    get draining() {
      return draining;
    },
    log,
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
  const wss = new WebSocketServer({ noServer: true, maxPayload: hardCeiling(maxMessageSize) });

  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const peer = peerOf(request);
    if (draining) {
      log(formatConnectionRefused(peer, DRAINING_REFUSED));
      return refuseUpgrade(socket, '503 Service Unavailable');
    }
    if (!isAuthorized(request.headers.authorization, token)) {
      log(formatConnectionRefused(peer, TOKEN_REFUSED));
      return refuseUpgrade(socket, '401 Unauthorized');
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      connections += 1;
      const connection = new Connection(connections, context);
      log(formatConnectionOpened(connection.id, peer));
      watchLiveness(ws, clientPingInterval);
      ws.on('close', () => {
        sockets.delete(ws);
        connection.end();
      });
      const session = new RpcSession(new WsTransport(ws, maxMessageSize), new ExecutorEndpoint(connection), {
        limits: { maxMessageSize },
      });
      sockets.set(ws, session);
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;

  return {
    url: `ws://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    get running() {
      return running;
    },
    close() {
      closing ??= (async () => {
        draining = true;
        const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
        if (running > 0) await new Promise<void>((resolve) => (drained = resolve));
        // drain() waits until every settled call's answer has been sent, so closing loses none.
        await Promise.all(
          [...sockets].map(async ([ws, session]) => {
            await session.drain().catch(() => {});
            await closeSocket(ws);
          }),
        );
        http.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}
