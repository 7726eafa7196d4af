/**
 * The options of `connect(url, options)`: one row each (src/protocol/option-schema.ts), and their
 * validation from the rows. Bad input is refused with `CONNECTION_REJECTED` (the contract's code for
 * unusable options), naming the option; an unknown one gets the nearest name, a renamed one is taken
 * under its old name with a warning.
 */
import * as v from 'valibot';
import { ExecutorError } from '../protocol/errors.js';
import { takeRenamed } from '../protocol/option-schema.js';
import {
  functionValue,
  type OptionTexts,
  option,
  optionsSchema,
  parseOptions,
  rowsOf,
} from '../protocol/parse-options.js';
import { REQUEST_FIELDS, TIMEOUT_BOUNDS, TIMEOUT_RULE } from '../protocol/request-schema.js';
import {
  formatConnectOptionInvalid,
  formatConnectOptionUnknown,
  formatHeadersNeedWebSocket,
  formatInvalidOutbound,
  formatInvalidUrl,
  formatTokenControlCharacter,
} from './texts.js';
import type { WebSocketConstructor } from './websocket-types.js';

/** What no header value may hold (ws and the Fetch standard refuse it): C0 controls but tab, and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL_CHARACTER = /[\x00-\x08\x0a-\x1f\x7f]/;

const CONNECT_SCHEMA = optionsSchema({
  /**
   * A WebSocket constructor to use instead of the runtime's global one. Required for `headers`
   * (the standard constructor cannot send them) and on Node 20, which has no global `WebSocket`.
   * It is called as `new websocket(url)`, or `new websocket(url, { headers })` when headers are set,
   * which is the ws package's signature.
   */
  websocket: option(functionValue<WebSocketConstructor>(), {
    type: 'function',
    defaultText: "the runtime's `WebSocket`",
    rule: 'a WebSocket constructor',
    description:
      "a constructor used instead; called as `new websocket(url)`, or `new websocket(url, { headers })` when headers are set (the ws package's signature)",
  }),
  /** Handshake headers, e.g. `{ authorization: 'Bearer <token>' }`. Needs `websocket`. */
  headers: option(
    v.custom<Record<string, string>>((value) => typeof value === 'object' && value !== null),
    {
      type: 'object',
      rule: 'a record of strings',
      description: 'handshake headers; need `websocket`, because the standard constructor cannot send headers',
    },
  ),
  /** Shorthand for `headers: { authorization: 'Bearer <token>' }`. Needs `websocket`. */
  token: option(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.check((token) => !CONTROL_CHARACTER.test(token)),
    ),
    {
      type: 'string',
      rule: 'a non-empty string with no control character (a line break, say)',
      description: "shorthand for `headers: { authorization: 'Bearer <token>' }`",
    },
  ),
  /** Retire the session after this many executions and open a fresh one. Unset: never. */
  rotateAfterExecutions: option(v.number(), {
    type: 'integer',
    unit: 'count',
    bounds: { kind: 'integer', min: 1 },
    defaultText: 'never',
    rule: 'a positive integer',
    description: 'retire the session after this many executions',
  }),
  /**
   * `false`: one attempt to reopen a broken session (a daemon that answers 503, draining or full,
   * still sends the attempt elsewhere, up to `maxReconnectAttempts` times). Default `true`.
   */
  reconnect: option(v.boolean(), {
    type: 'boolean',
    default: true,
    rule: 'a boolean',
    description: '`false`: a broken session gets one reopen attempt',
  }),
  /** Attempts per reopen when `reconnect` is on. Default 5. */
  maxReconnectAttempts: option(v.number(), {
    type: 'integer',
    unit: 'count',
    bounds: { kind: 'integer', min: 1 },
    default: 5,
    rule: 'a positive integer',
    description: 'attempts per reopen when `reconnect` is on',
  }),
  /** Milliseconds; the wait before reopen attempt `n` (from 0) is `backoffMs * (n + 1)`. Default 100. */
  backoffMs: option(v.number(), {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'atLeast', min: 0 },
    default: 100,
    rule: 'a finite number >= 0',
    description: 'the wait before reopen attempt `n` (from 0) is `backoffMs * (n + 1)`',
    renamedFrom: { name: 'backoff' },
  }),
  /** Milliseconds the version handshake may take. Default 10000. */
  handshakeTimeoutMs: option(v.number(), {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'positive', min: 0 },
    default: 10_000,
    rule: 'a finite number > 0',
    description: 'how long opening the socket plus the version handshake may take',
    renamedFrom: { name: 'handshakeTimeout' },
  }),
  /** Milliseconds between heartbeats while calls are in flight. Default 5000. */
  heartbeatIntervalMs: option(v.number(), {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'positive', min: 0 },
    default: 5_000,
    rule: 'a finite number > 0',
    description: 'time between heartbeats while calls are in flight',
    renamedFrom: { name: 'heartbeatInterval' },
  }),
  /** Milliseconds a heartbeat may go unanswered before the session counts as broken. Default 5000. */
  heartbeatTimeoutMs: option(v.number(), {
    type: 'number',
    unit: 'ms',
    bounds: { kind: 'positive', min: 0 },
    default: 5_000,
    rule: 'a finite number > 0',
    description: 'how long a heartbeat may go unanswered',
    renamedFrom: { name: 'heartbeatTimeout' },
  }),
  /**
   * Connection-time default for `ExecuteRequest.timeout`, by the request field's own rule (the
   * daemon bounds a number by its maxTimeout); a defined request field wins.
   */
  timeout: option(REQUEST_FIELDS.timeout, {
    type: 'number',
    unit: 'ms',
    unitExempt: 'the default of `ExecuteRequest.timeout`, named as the request field',
    bounds: TIMEOUT_BOUNDS,
    defaultText: 'unset',
    rule: TIMEOUT_RULE,
    description: 'connection-time default for the request field of the same name',
  }),
  /** Connection-time default for `ExecuteRequest.countHostWaits`. */
  countHostWaits: option(REQUEST_FIELDS.countHostWaits, {
    type: 'boolean',
    defaultText: 'unset',
    rule: 'a boolean',
    description: 'connection-time default for the request field of the same name',
  }),
  /** Connection-time default for `ExecuteRequest.outbound`. */
  outbound: option(REQUEST_FIELDS.outbound, {
    type: 'function',
    defaultText: 'unset',
    rule: 'a function, null or undefined',
    description: 'connection-time default for the request field of the same name',
  }),
  /**
   * Sent as the `x-codemode-executor-affinity` header of every session this executor opens (with
   * an injected `websocket`), so a load balancer can keep it on one daemon across reconnects and
   * rotations: a retained execution lives on the daemon that ran it. Default: a random id per executor.
   */
  affinity: option(v.pipe(v.string(), v.regex(/^[\x21-\x7e]{1,128}$/)), {
    type: 'string',
    defaultText: 'a random id per executor',
    rule: 'a header value of 1 to 128 printable ASCII characters',
    description:
      'sent as the `x-codemode-executor-affinity` header of every session (with an injected `websocket`), so a load balancer can keep this executor on one daemon (docs/fleet.md)',
  }),
});

/** What `connect(url, options)` takes. */
export type ConnectOptions = v.InferInput<typeof CONNECT_SCHEMA> & {
  /** @deprecated Renamed `backoffMs`; still taken, with a warning. */
  backoff?: number | undefined;
  /** @deprecated Renamed `handshakeTimeoutMs`; still taken, with a warning. */
  handshakeTimeout?: number | undefined;
  /** @deprecated Renamed `heartbeatIntervalMs`; still taken, with a warning. */
  heartbeatInterval?: number | undefined;
  /** @deprecated Renamed `heartbeatTimeoutMs`; still taken, with a warning. */
  heartbeatTimeout?: number | undefined;
};

/** Every option `connect()` takes, read back from its schema: docs/remote.md's table. */
export const CONNECT_ROWS = rowsOf(CONNECT_SCHEMA);

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

function reject(message: string): never {
  throw new ExecutorError('CONNECTION_REJECTED', message);
}

/** connect()'s words for a refusal; a few options say more than their rule. */
const CONNECT_TEXTS: OptionTexts = {
  notObject: (value) => formatConnectOptionInvalid('', 'an object', value),
  unknown: formatConnectOptionUnknown,
  invalid(name, rule, value) {
    if (name === 'outbound') return formatInvalidOutbound(value);
    if (name === 'token' && typeof value === 'string' && value !== '') {
      const control = value.search(CONTROL_CHARACTER);
      return formatTokenControlCharacter(value.charCodeAt(control), control + 1, value.length);
    }
    // A number that is not positive is refused as one (`a finite number > 0`), as before the rows.
    if (name === 'maxReconnectAttempts' && !(typeof value === 'number' && Number.isFinite(value) && value > 0))
      return formatConnectOptionInvalid(name, 'a finite number > 0', value);
    return formatConnectOptionInvalid(name, rule, value);
  },
};

export function validateUrl(url: unknown): string {
  if (typeof url !== 'string' || !/^wss?:\/\//i.test(url)) reject(formatInvalidUrl(url));
  return url;
}

export function resolveConnectOptions(given: ConnectOptions = {}): ResolvedConnectOptions {
  const options = parseOptions(CONNECT_SCHEMA, takeRenamed('connect()', given, CONNECT_ROWS), CONNECT_TEXTS, reject);
  const { websocket, token, timeout, countHostWaits, outbound } = options;
  if (websocket === undefined) {
    // Named as the caller passed them: a token becomes a header only below.
    const needHeaders = (['token', 'headers'] as const).filter((name) => options[name] !== undefined);
    if (needHeaders.length > 0) reject(formatHeadersNeedWebSocket(needHeaders));
  }
  const headers = token === undefined ? options.headers : { ...options.headers, authorization: `Bearer ${token}` };
  return {
    websocket,
    headers,
    rotateAfterExecutions: options.rotateAfterExecutions,
    reconnect: options.reconnect,
    maxReconnectAttempts: options.maxReconnectAttempts,
    backoffMs: options.backoffMs,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs,
    affinity: options.affinity ?? randomAffinity(),
    defaults: { timeout, countHostWaits, outbound },
  };
}
