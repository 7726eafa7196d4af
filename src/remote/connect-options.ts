/**
 * The options of `connect(url, options)`, their defaults, and their validation. Bad input is
 * refused with `CONNECTION_REJECTED` (the contract's code for unusable options), naming the option.
 */
import { ExecutorError } from '../protocol/errors.js';
import { everyKey } from '../protocol/every-key.js';
import type { OutboundFetch } from '../protocol/types.js';
import {
  formatHeadersNeedWebSocket,
  formatInvalidOption,
  formatInvalidOutbound,
  formatInvalidUrl,
  formatUnknownOption,
} from './texts.js';
import type { WebSocketConstructor } from './websocket-types.js';

export interface ConnectOptions {
  /**
   * A WebSocket constructor to use instead of the runtime's global one. Required for `headers`
   * (the standard constructor cannot send them) and on Node 20, which has no global `WebSocket`.
   * It is called as `new websocket(url)`, or `new websocket(url, { headers })` when headers are set,
   * which is the ws package's signature.
   */
  websocket?: WebSocketConstructor | undefined;
  /** Handshake headers, e.g. `{ authorization: 'Bearer <token>' }`. Needs `websocket`. */
  headers?: Record<string, string> | undefined;
  /** Shorthand for `headers: { authorization: 'Bearer <token>' }`. Needs `websocket`. */
  token?: string | undefined;
  /** Retire the session after this many executions and open a fresh one. Unset: never. */
  rotateAfterExecutions?: number | undefined;
  /**
   * `false`: one attempt to reopen a broken session (a daemon that answers 503, draining or full,
   * still sends the attempt elsewhere, up to `maxReconnectAttempts` times). Default `true`.
   */
  reconnect?: boolean | undefined;
  /** Attempts per reopen when `reconnect` is on. Default 5. */
  maxReconnectAttempts?: number | undefined;
  /** Milliseconds; the wait before reopen attempt `n` (from 0) is `backoff * (n + 1)`. Default 100. */
  backoff?: number | undefined;
  /** Milliseconds the version handshake may take. Default 10000. */
  handshakeTimeout?: number | undefined;
  /** Milliseconds between heartbeats while calls are in flight. Default 5000. */
  heartbeatInterval?: number | undefined;
  /** Milliseconds a heartbeat may go unanswered before the session counts as broken. Default 5000. */
  heartbeatTimeout?: number | undefined;
  /** Connection-time default for `ExecuteRequest.timeout`; a defined request field wins. */
  timeout?: number | null | undefined;
  /** Connection-time default for `ExecuteRequest.countHostWaits`. */
  countHostWaits?: boolean | undefined;
  /** Connection-time default for `ExecuteRequest.outbound`. */
  outbound?: OutboundFetch | null | undefined;
  /**
   * Sent as the `x-codemode-executor-affinity` header of every session this executor opens (with
   * an injected `websocket`), so a load balancer can keep it on one daemon across reconnects and
   * rotations: a retained execution lives on the daemon that ran it. Default: a random id per executor.
   */
  affinity?: string | undefined;
}

/** Every option `connect()` takes, for the refusal of one it does not. */
const CONNECT_OPTIONS = everyKey<ConnectOptions>({
  websocket: true,
  headers: true,
  token: true,
  rotateAfterExecutions: true,
  reconnect: true,
  maxReconnectAttempts: true,
  backoff: true,
  handshakeTimeout: true,
  heartbeatInterval: true,
  heartbeatTimeout: true,
  timeout: true,
  countHostWaits: true,
  outbound: true,
  affinity: true,
});

export interface ResolvedConnectOptions {
  websocket: WebSocketConstructor | undefined;
  headers: Record<string, string> | undefined;
  rotateAfterExecutions: number | undefined;
  reconnect: boolean;
  maxReconnectAttempts: number;
  backoff: number;
  handshakeTimeout: number;
  heartbeatInterval: number;
  heartbeatTimeout: number;
  affinity: string;
  defaults: Pick<ConnectOptions, 'timeout' | 'countHostWaits' | 'outbound'>;
}

const CONNECT_DEFAULTS = {
  reconnect: true,
  maxReconnectAttempts: 5,
  backoff: 100,
  handshakeTimeout: 10_000,
  heartbeatInterval: 5_000,
  heartbeatTimeout: 5_000,
} as const;

/** Runtime-neutral: `crypto.randomUUID` is global in Node 20, workerd and browsers. */
function randomAffinity(): string {
  return crypto.randomUUID();
}

function reject(message: string): never {
  throw new ExecutorError('CONNECTION_REJECTED', message);
}

function positive(name: string, value: unknown, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  const ok = typeof value === 'number' && Number.isFinite(value) && (allowZero ? value >= 0 : value > 0);
  if (!ok) reject(formatInvalidOption(name, allowZero ? 'a finite number >= 0' : 'a finite number > 0', value));
  return value;
}

export function validateUrl(url: unknown): string {
  if (typeof url !== 'string' || !/^wss?:\/\//i.test(url)) reject(formatInvalidUrl(url));
  return url;
}

export function resolveConnectOptions(options: ConnectOptions = {}): ResolvedConnectOptions {
  if (typeof options !== 'object' || options === null) reject(formatInvalidOption('', 'an object', options));
  for (const name of Object.keys(options)) {
    if (!(CONNECT_OPTIONS as readonly string[]).includes(name)) reject(formatUnknownOption(name, CONNECT_OPTIONS));
  }
  const {
    affinity = randomAffinity(),
    websocket,
    token,
    rotateAfterExecutions,
    reconnect,
    outbound,
    timeout,
    countHostWaits,
  } = options;
  if (websocket !== undefined && typeof websocket !== 'function')
    reject(formatInvalidOption('websocket', 'a WebSocket constructor', websocket));
  if (token !== undefined && (typeof token !== 'string' || token === ''))
    reject(formatInvalidOption('token', 'a non-empty string', token));
  if (options.headers !== undefined && (typeof options.headers !== 'object' || options.headers === null)) {
    reject(formatInvalidOption('headers', 'a record of strings', options.headers));
  }
  if (websocket === undefined) {
    // Named as the caller passed them: a token becomes a header only below.
    const needHeaders = (['token', 'headers'] as const).filter((name) => options[name] !== undefined);
    if (needHeaders.length > 0) reject(formatHeadersNeedWebSocket(needHeaders));
  }
  if (rotateAfterExecutions !== undefined && !(Number.isInteger(rotateAfterExecutions) && rotateAfterExecutions > 0)) {
    reject(formatInvalidOption('rotateAfterExecutions', 'a positive integer', rotateAfterExecutions));
  }
  if (reconnect !== undefined && typeof reconnect !== 'boolean')
    reject(formatInvalidOption('reconnect', 'a boolean', reconnect));
  if (outbound !== undefined && outbound !== null && typeof outbound !== 'function')
    reject(formatInvalidOutbound(outbound));
  if (timeout !== undefined && timeout !== null && !(typeof timeout === 'number' && timeout > 0)) {
    reject(formatInvalidOption('timeout', 'a number > 0 or null', timeout));
  }
  if (countHostWaits !== undefined && typeof countHostWaits !== 'boolean') {
    reject(formatInvalidOption('countHostWaits', 'a boolean', countHostWaits));
  }
  if (typeof affinity !== 'string' || affinity === '' || !/^[\x21-\x7e]{1,128}$/.test(affinity)) {
    reject(formatInvalidOption('affinity', 'a header value of 1 to 128 printable ASCII characters', affinity));
  }
  const maxReconnectAttempts = positive(
    'maxReconnectAttempts',
    options.maxReconnectAttempts,
    CONNECT_DEFAULTS.maxReconnectAttempts,
  );
  if (!Number.isInteger(maxReconnectAttempts))
    reject(formatInvalidOption('maxReconnectAttempts', 'a positive integer', maxReconnectAttempts));
  const headers = token === undefined ? options.headers : { ...options.headers, authorization: `Bearer ${token}` };
  return {
    websocket,
    headers,
    rotateAfterExecutions,
    reconnect: reconnect ?? CONNECT_DEFAULTS.reconnect,
    maxReconnectAttempts,
    backoff: positive('backoff', options.backoff, CONNECT_DEFAULTS.backoff, true),
    handshakeTimeout: positive('handshakeTimeout', options.handshakeTimeout, CONNECT_DEFAULTS.handshakeTimeout),
    heartbeatInterval: positive('heartbeatInterval', options.heartbeatInterval, CONNECT_DEFAULTS.heartbeatInterval),
    heartbeatTimeout: positive('heartbeatTimeout', options.heartbeatTimeout, CONNECT_DEFAULTS.heartbeatTimeout),
    affinity,
    defaults: { timeout, countHostWaits, outbound },
  };
}
