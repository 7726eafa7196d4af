/**
 * The options of `connect(url, options)`: one row each (src/protocol/option-schema.ts), and their
 * validation from the rows. Bad input is refused with `CONNECTION_REJECTED` (the contract's code for
 * unusable options), naming the option; an unknown one gets the nearest name, a renamed one is taken
 * under its old name with a warning.
 */
import { ExecutorError } from '../protocol/errors.js';
import { meetsBounds, nearestOption, type OptionRow, takeRenamed } from '../protocol/option-schema.js';
import type { OutboundFetch } from '../protocol/types.js';
import {
  formatHeadersNeedWebSocket,
  formatInvalidOption,
  formatInvalidOutbound,
  formatInvalidUrl,
  formatTokenControlCharacter,
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
  /** Milliseconds; the wait before reopen attempt `n` (from 0) is `backoffMs * (n + 1)`. Default 100. */
  backoffMs?: number | undefined;
  /** Milliseconds the version handshake may take. Default 10000. */
  handshakeTimeoutMs?: number | undefined;
  /** Milliseconds between heartbeats while calls are in flight. Default 5000. */
  heartbeatIntervalMs?: number | undefined;
  /** Milliseconds a heartbeat may go unanswered before the session counts as broken. Default 5000. */
  heartbeatTimeoutMs?: number | undefined;
  /** @deprecated Renamed `backoffMs`; still taken, with a warning. */
  backoff?: number | undefined;
  /** @deprecated Renamed `handshakeTimeoutMs`; still taken, with a warning. */
  handshakeTimeout?: number | undefined;
  /** @deprecated Renamed `heartbeatIntervalMs`; still taken, with a warning. */
  heartbeatInterval?: number | undefined;
  /** @deprecated Renamed `heartbeatTimeoutMs`; still taken, with a warning. */
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

/** The old names of renamed options, which a row's `renamedFrom` names and the rows do not list. */
type RenamedConnectOption = 'backoff' | 'handshakeTimeout' | 'heartbeatInterval' | 'heartbeatTimeout';

/**
 * Every option `connect()` takes, one row each: its default, its rule as a refusal words it, and
 * its description (docs/remote.md). The checks below, and the refusal of an unknown one, read them.
 */
export const CONNECT_ROWS = {
  websocket: {
    type: 'function',
    defaultText: "the runtime's `WebSocket`",
    rule: 'a WebSocket constructor',
    description:
      "a constructor used instead; called as `new websocket(url)`, or `new websocket(url, { headers })` when headers are set (the ws package's signature)",
  },
  headers: {
    type: 'object',
    rule: 'a record of strings',
    description: 'handshake headers; need `websocket`, because the standard constructor cannot send headers',
  },
  token: {
    type: 'string',
    rule: 'a non-empty string with no control character (a line break, say)',
    description: "shorthand for `headers: { authorization: 'Bearer <token>' }`",
  },
  rotateAfterExecutions: {
    type: 'integer',
    unit: 'count',
    bounds: { kind: 'integer', min: 1 },
    defaultText: 'never',
    rule: 'a positive integer',
    description: 'retire the session after this many executions',
  },
  reconnect: {
    type: 'boolean',
    default: true,
    rule: 'a boolean',
    description: '`false`: a broken session gets one reopen attempt',
  },
  maxReconnectAttempts: {
    type: 'integer',
    unit: 'count',
    bounds: { kind: 'integer', min: 1 },
    default: 5,
    rule: 'a positive integer',
    description: 'attempts per reopen when `reconnect` is on',
  },
  backoffMs: {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'atLeast', min: 0 },
    default: 100,
    rule: 'a finite number >= 0',
    description: 'the wait before reopen attempt `n` (from 0) is `backoffMs * (n + 1)`',
    renamedFrom: { name: 'backoff' },
  },
  handshakeTimeoutMs: {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'positive', min: 0 },
    default: 10_000,
    rule: 'a finite number > 0',
    description: 'how long opening the socket plus the version handshake may take',
    renamedFrom: { name: 'handshakeTimeout' },
  },
  heartbeatIntervalMs: {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'positive', min: 0 },
    default: 5_000,
    rule: 'a finite number > 0',
    description: 'time between heartbeats while calls are in flight',
    renamedFrom: { name: 'heartbeatInterval' },
  },
  heartbeatTimeoutMs: {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'positive', min: 0 },
    default: 5_000,
    rule: 'a finite number > 0',
    description: 'how long a heartbeat may go unanswered',
    renamedFrom: { name: 'heartbeatTimeout' },
  },
  timeout: {
    type: 'number',
    unit: 'ms',
    unitExempt: 'the default of `ExecuteRequest.timeout`, named as the request field',
    defaultText: 'unset',
    rule: 'a number > 0 or null',
    description: 'connection-time default for the request field of the same name',
  },
  countHostWaits: {
    type: 'boolean',
    defaultText: 'unset',
    rule: 'a boolean',
    description: 'connection-time default for the request field of the same name',
  },
  outbound: {
    type: 'function',
    defaultText: 'unset',
    rule: 'a function, null or undefined',
    description: 'connection-time default for the request field of the same name',
  },
  affinity: {
    type: 'string',
    defaultText: 'a random id per executor',
    rule: 'a header value of 1 to 128 printable ASCII characters',
    description:
      'sent as the `x-codemode-executor-affinity` header of every session (with an injected `websocket`), so a load balancer can keep this executor on one daemon (docs/fleet.md)',
  },
} as const satisfies Record<Exclude<keyof ConnectOptions, RenamedConnectOption>, OptionRow>;

/** Every option `connect()` takes, from the rows, for the refusal of one it does not. */
const CONNECT_OPTIONS = Object.keys(CONNECT_ROWS);

export interface ResolvedConnectOptions {
  websocket: WebSocketConstructor | undefined;
  headers: Record<string, string> | undefined;
  rotateAfterExecutions: number | undefined;
  reconnect: boolean;
  maxReconnectAttempts: number;
  backoffMs: number;
  handshakeTimeoutMs: number;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
  affinity: string;
  defaults: Pick<ConnectOptions, 'timeout' | 'countHostWaits' | 'outbound'>;
}

/** Runtime-neutral: `crypto.randomUUID` is global in Node 20, workerd and browsers. */
function randomAffinity(): string {
  return crypto.randomUUID();
}

/** What no header value may hold (ws and the Fetch standard refuse it): C0 controls but tab, and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_CHARACTER = /[\x00-\x08\x0a-\x1f\x7f]/;

function reject(message: string): never {
  throw new ExecutorError('CONNECTION_REJECTED', message);
}

type NumberOption = 'backoffMs' | 'handshakeTimeoutMs' | 'heartbeatIntervalMs' | 'heartbeatTimeoutMs';

/** A number option, checked against its row's bounds; its default when undefined. */
function milliseconds(name: NumberOption, value: unknown): number {
  const row = CONNECT_ROWS[name];
  if (value === undefined) return row.default;
  if (!meetsBounds(row.bounds, value)) reject(formatInvalidOption(name, row.rule, value));
  return value;
}

export function validateUrl(url: unknown): string {
  if (typeof url !== 'string' || !/^wss?:\/\//i.test(url)) reject(formatInvalidUrl(url));
  return url;
}

export function resolveConnectOptions(given: ConnectOptions = {}): ResolvedConnectOptions {
  if (typeof given !== 'object' || given === null) reject(formatInvalidOption('', 'an object', given));
  const options = takeRenamed('connect()', given, CONNECT_ROWS);
  for (const name of Object.keys(options)) {
    if (!CONNECT_OPTIONS.includes(name))
      reject(formatUnknownOption(name, CONNECT_OPTIONS, nearestOption(name, CONNECT_OPTIONS)));
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
    reject(formatInvalidOption('websocket', CONNECT_ROWS.websocket.rule, websocket));
  if (token !== undefined && (typeof token !== 'string' || token === ''))
    reject(formatInvalidOption('token', CONNECT_ROWS.token.rule, token));
  const control = token === undefined ? -1 : token.search(CONTROL_CHARACTER);
  if (token !== undefined && control >= 0)
    reject(formatTokenControlCharacter(token.charCodeAt(control), control + 1, token.length));
  if (options.headers !== undefined && (typeof options.headers !== 'object' || options.headers === null)) {
    reject(formatInvalidOption('headers', CONNECT_ROWS.headers.rule, options.headers));
  }
  if (websocket === undefined) {
    // Named as the caller passed them: a token becomes a header only below.
    const needHeaders = (['token', 'headers'] as const).filter((name) => options[name] !== undefined);
    if (needHeaders.length > 0) reject(formatHeadersNeedWebSocket(needHeaders));
  }
  if (rotateAfterExecutions !== undefined && !(Number.isInteger(rotateAfterExecutions) && rotateAfterExecutions > 0)) {
    reject(
      formatInvalidOption('rotateAfterExecutions', CONNECT_ROWS.rotateAfterExecutions.rule, rotateAfterExecutions),
    );
  }
  if (reconnect !== undefined && typeof reconnect !== 'boolean')
    reject(formatInvalidOption('reconnect', CONNECT_ROWS.reconnect.rule, reconnect));
  if (outbound !== undefined && outbound !== null && typeof outbound !== 'function')
    reject(formatInvalidOutbound(outbound));
  if (timeout !== undefined && timeout !== null && !(typeof timeout === 'number' && timeout > 0)) {
    reject(formatInvalidOption('timeout', CONNECT_ROWS.timeout.rule, timeout));
  }
  if (countHostWaits !== undefined && typeof countHostWaits !== 'boolean') {
    reject(formatInvalidOption('countHostWaits', CONNECT_ROWS.countHostWaits.rule, countHostWaits));
  }
  if (typeof affinity !== 'string' || affinity === '' || !/^[\x21-\x7e]{1,128}$/.test(affinity)) {
    reject(formatInvalidOption('affinity', CONNECT_ROWS.affinity.rule, affinity));
  }
  const maxReconnectAttempts = options.maxReconnectAttempts ?? CONNECT_ROWS.maxReconnectAttempts.default;
  // A number that is not positive is refused as one (`a finite number > 0`), as before the rows.
  if (typeof maxReconnectAttempts !== 'number' || !Number.isFinite(maxReconnectAttempts) || maxReconnectAttempts <= 0)
    reject(formatInvalidOption('maxReconnectAttempts', 'a finite number > 0', maxReconnectAttempts));
  if (!Number.isInteger(maxReconnectAttempts))
    reject(formatInvalidOption('maxReconnectAttempts', CONNECT_ROWS.maxReconnectAttempts.rule, maxReconnectAttempts));
  const headers = token === undefined ? options.headers : { ...options.headers, authorization: `Bearer ${token}` };
  return {
    websocket,
    headers,
    rotateAfterExecutions,
    reconnect: reconnect ?? CONNECT_ROWS.reconnect.default,
    maxReconnectAttempts,
    backoffMs: milliseconds('backoffMs', options.backoffMs),
    handshakeTimeoutMs: milliseconds('handshakeTimeoutMs', options.handshakeTimeoutMs),
    heartbeatIntervalMs: milliseconds('heartbeatIntervalMs', options.heartbeatIntervalMs),
    heartbeatTimeoutMs: milliseconds('heartbeatTimeoutMs', options.heartbeatTimeoutMs),
    affinity,
    defaults: { timeout, countHostWaits, outbound },
  };
}
