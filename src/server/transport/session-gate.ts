/**
 * What stands between a TCP connection and a session: the bounds that hold before a client is
 * authenticated (a short handshake timeout, a cap on unauthenticated sockets per address, a
 * connection shed at once when the daemon's file descriptors run short), and the
 * decision on the upgrade itself (draining, the token, `--max-connections`). Every refusal is
 * logged, counted, and answered with a status the client maps onto a text of its own (401: no
 * token, 403: a wrong one, 503: go to another daemon).
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { UPGRADE_REFUSAL_STATUS } from '../../wire/refusals.js';
import type { LogSink } from '../observe/log.js';
import type { DaemonMetrics, SessionRefusal } from '../observe/metrics.js';
import { RefusalLog } from '../observe/refusal-log.js';
import {
  formatConnectionRefused,
  formatDescriptorsShort,
  formatHandshakeTimedOut,
  formatTooManySessions,
  formatTooManyUnauthenticated,
  SESSION_REFUSED_DRAINING,
  TOKEN_MISSING,
  TOKEN_WRONG,
} from '../texts.js';
import { checkBearer } from './auth.js';
import { type DescriptorWatch, SHED_HEADROOM } from './descriptors.js';
import { remoteOf } from './proxy-header.js';

export interface GateSettings {
  /** Every token the daemon takes; none: no token is asked for. */
  tokens: readonly string[];
  maxConnections: number;
  handshakeTimeoutMs: number;
  maxUnauthenticatedPerPeer: number;
}

/** A refused upgrade: the status line the client sees, and why. */
interface Refusal {
  status: (typeof UPGRADE_REFUSAL_STATUS)[keyof typeof UPGRADE_REFUSAL_STATUS];
  reason: SessionRefusal;
  text: string;
}

/** The client's address and port as the log writes them: behind a PROXY header, the client's own. */
export function peerOf(socket: Socket): string {
  const { address, port } = remoteOf(socket);
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export class SessionGate {
  readonly #settings: GateSettings;
  readonly #metrics: DaemonMetrics;
  /** Sockets not yet upgraded, by remote address. */
  readonly #pending = new Map<string, Set<Socket>>();
  readonly #timers = new Map<Socket, ReturnType<typeof setTimeout>>();
  readonly #refusals: RefusalLog;
  readonly #descriptors: DescriptorWatch;
  /** Every accepted socket still open, sessions included: one descriptor each. */
  #sockets = 0;

  constructor(settings: GateSettings, log: LogSink, metrics: DaemonMetrics, descriptors: DescriptorWatch) {
    this.#settings = settings;
    this.#metrics = metrics;
    this.#refusals = new RefusalLog(log, 'connection');
    this.#descriptors = descriptors;
  }

  /** Accepted sockets still open. */
  get sockets(): number {
    return this.#sockets;
  }

  /** A TCP connection was accepted: it has `handshakeTimeoutMs` to become an authenticated session. */
  admit(socket: Socket): void {
    this.#sockets += 1;
    socket.once('close', () => {
      this.#sockets -= 1;
    });
    const { address } = remoteOf(socket);
    const peer = peerOf(socket);
    // Out of descriptors the pool could start no process: the newest connection goes at once.
    const shortage = this.#descriptors.short(this.#sockets);
    if (shortage !== undefined) {
      const text = formatDescriptorsShort(shortage.open, shortage.limit, SHED_HEADROOM);
      this.#refused(peer, 'descriptors', text);
      shed(socket, text);
      return;
    }
    const pending = this.#pending.get(address) ?? new Set<Socket>();
    if (pending.size >= this.#settings.maxUnauthenticatedPerPeer) {
      this.#refused(peer, 'unauthenticated_per_peer', formatTooManyUnauthenticated(address, pending.size));
      socket.destroy();
      return;
    }
    pending.add(socket);
    this.#pending.set(address, pending);
    const timer = setTimeout(() => {
      this.#refused(peer, 'handshake_timeout', formatHandshakeTimedOut(this.#settings.handshakeTimeoutMs));
      socket.destroy();
    }, this.#settings.handshakeTimeoutMs);
    timer.unref();
    this.#timers.set(socket, timer);
    socket.once('close', () => this.settled(socket));
  }

  /** The socket became a session, or closed: it no longer counts as unauthenticated. */
  settled(socket: Socket): void {
    const timer = this.#timers.get(socket);
    if (timer !== undefined) clearTimeout(timer);
    this.#timers.delete(socket);
    const { address } = remoteOf(socket);
    const pending = this.#pending.get(address);
    if (pending === undefined) return;
    pending.delete(socket);
    if (pending.size === 0) this.#pending.delete(address);
  }

  /**
   * Decides an upgrade; a refusal is logged, counted and answered on the socket. When the upgrade
   * may go on, the index of the daemon's token it carried (0 without tokens); undefined otherwise.
   */
  decide(request: IncomingMessage, socket: Duplex, state: { draining: boolean; open: number }): number | undefined {
    const refusal = this.#refusalOf(request, state);
    if (typeof refusal === 'number') return refusal;
    this.#refused(peerOf(request.socket), refusal.reason, refusal.text);
    answer(socket, refusal);
    return undefined;
  }

  /** The refusal, or the index of the token the upgrade carried (its tenant). */
  #refusalOf(request: IncomingMessage, state: { draining: boolean; open: number }): Refusal | number {
    if (state.draining)
      return { status: UPGRADE_REFUSAL_STATUS.notTakingSessions, reason: 'draining', text: SESSION_REFUSED_DRAINING };
    const bearer = checkBearer(request.headers.authorization, this.#settings.tokens);
    if (bearer === 'missing')
      return { status: UPGRADE_REFUSAL_STATUS.tokenMissing, reason: 'token_missing', text: TOKEN_MISSING };
    if (bearer === 'wrong')
      return { status: UPGRADE_REFUSAL_STATUS.tokenWrong, reason: 'token_wrong', text: TOKEN_WRONG };
    const limit = this.#settings.maxConnections;
    if (state.open >= limit) {
      return {
        status: UPGRADE_REFUSAL_STATUS.notTakingSessions,
        reason: 'max_connections',
        text: formatTooManySessions(limit),
      };
    }
    return bearer;
  }

  #refused(peer: string, reason: SessionRefusal, text: string): void {
    this.#metrics.sessionRefused(reason);
    this.#refusals.refused(reason, formatConnectionRefused(peer, text));
  }

  /** A socket without a valid PROXY protocol header (proxy-header.ts): logged and counted. */
  refuseProxyHeader(socket: Socket, reason: string): void {
    this.#refused(peerOf(socket), 'proxy_header', reason);
  }

  /** Logs what the current window held back, at once (the server is closing). */
  flush(): void {
    this.#refusals.flush();
  }
}

/** Answers 503 before the request is read, and lets the descriptor go as soon as the answer is written. */
function shed(socket: Socket, text: string): void {
  socket.on('error', () => {});
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 503 ${STATUS_CODES[503]}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

function answer(socket: Duplex, refusal: Refusal): void {
  // A client that resets mid-answer must not crash the daemon with an unhandled 'error'.
  socket.on('error', () => {});
  const body = `${refusal.text}\n`;
  const challenge = refusal.status === UPGRADE_REFUSAL_STATUS.tokenMissing ? 'WWW-Authenticate: Bearer\r\n' : '';
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nConnection: close\r\n${challenge}Content-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
