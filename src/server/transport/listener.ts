/**
 * The executor port: an http server that answers only upgrades (any other request gets 426), with
 * every TCP connection handed to the session gate first, and behind a proxy that speaks PROXY
 * protocol v2 a listener that reads each connection's header before http sees it (proxy-header.ts).
 * A port another process holds is refused with our text; an accept that finds no descriptor is
 * logged and counted, and the daemon goes on.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { LogSink } from '../observe/log.js';
import type { DaemonMetrics } from '../observe/metrics.js';
import { RefusalLog } from '../observe/refusal-log.js';
import type { ServerSettings } from '../options/server-options.js';
import { formatAcceptFailed, formatPortInUse, UPGRADE_REQUIRED } from '../texts.js';
import type { DescriptorWatch } from './descriptors.js';
import { proxiedListener } from './proxy-header.js';
import type { SessionGate } from './session-gate.js';

/** What the listener hands its connections and its faults to. */
export interface ListenerParts {
  readonly settings: ServerSettings;
  readonly gate: SessionGate;
  readonly descriptors: DescriptorWatch;
  readonly metrics: DaemonMetrics;
  readonly log: LogSink;
  /** Where an upgrade request goes (sessions.ts). */
  readonly upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export class Listener {
  /** The address it listens on: `host` as bound, and the port (the one picked, for port 0). */
  readonly address: AddressInfo;
  readonly #http: Server;
  readonly #listener: Server | NetServer;
  readonly #acceptFailures: RefusalLog;

  /** Listens on the settings' host and port; rejects with our text when the port is taken. */
  static async open(parts: ListenerParts): Promise<Listener> {
    const { settings, gate } = parts;
    const http = createServer((_request, response) => {
      response.writeHead(426, { 'content-type': 'text/plain' }).end(UPGRADE_REQUIRED);
    });
    http.on('connection', (socket: Socket) => gate.admit(socket));
    http.on('upgrade', parts.upgrade);
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
    return new Listener(http, listener, parts);
  }

  private constructor(http: Server, listener: Server | NetServer, parts: ListenerParts) {
    this.#http = http;
    this.#listener = listener;
    this.#acceptFailures = new RefusalLog(parts.log, 'connection');
    // An accept that finds no descriptor (EMFILE, ENFILE) is emitted on the listener: unheard, it
    // would end the daemon. The open sessions go on; libuv accepts again once descriptors are free.
    listener.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? 'an error';
      if (code === 'EMFILE' || code === 'ENFILE') parts.metrics.descriptorFault('accept');
      this.#acceptFailures.refused(`accept ${code}`, formatAcceptFailed(code, parts.descriptors.limit));
    });
    this.address = listener.address() as AddressInfo;
  }

  /** `ws://<host>:<port>`, an IPv6 host in brackets. */
  get url(): string {
    const host = this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address;
    return `ws://${host}:${this.address.port}`;
  }

  /** Stops accepting connections; resolves once the ones it accepted have all closed. */
  stop(): Promise<void> {
    return new Promise<void>((resolve) => this.#listener.close(() => resolve()));
  }

  /** Ends the connections that are left: those that never became a session. */
  closeAllConnections(): void {
    this.#http.closeAllConnections();
  }

  /** Writes the summary line of accept failures not yet logged. */
  flush(): void {
    this.#acceptFailures.flush();
  }
}

/** Another process holds the port. */
function portInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EADDRINUSE';
}
