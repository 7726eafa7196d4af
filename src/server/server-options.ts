/**
 * The options of `createExecutorServer`: their defaults, and the checks that name the option a
 * value broke. The CLI maps each flag onto one of these (cli-args.ts).
 */
import { everyKey } from '../protocol/every-key.js';
import type { Executor } from '../protocol/types.js';
import { isLoopbackHost } from './auth.js';
import { isValidDaemonId } from './handle-ids.js';
import type { LogSink } from './log.js';
import { formatInvalidServerOption, formatUnknownServerOption, formatUnsafeBind } from './texts.js';

/** The environment variable the daemon's CLI reads its bearer token from when `--token` is not given. */
export const TOKEN_ENV = 'CODEMODE_EXECUTOR_TOKEN';
/** The largest TCP port: the listener's and the admin listener's ports are from 0 (any free one) to this. */
export const MAX_PORT = 65_535;
const PORT_RULE = `a port number (0 to ${MAX_PORT})`;

export interface ExecutorServerOptions {
  /** The native executor every connection shares. The server does not dispose it. */
  executor: Executor;
  /** Default `127.0.0.1`. A non-loopback address needs a `token`. */
  host?: string | undefined;
  /** Default 8787; 0 picks a free one. */
  port?: number | undefined;
  /**
   * The bearer token clients must send as `Authorization: Bearer <token>`, or several: each is a
   * tenant of its own, held to its share of the memory budget and its own retained executions.
   */
  token?: string | readonly string[] | undefined;
  /** Bytes; a larger incoming message fails alone with `LIMIT_EXCEEDED`. Default 16 MiB. */
  maxMessageSize?: number | undefined;
  /** Concurrent executions (and handle calls) per connection; more fail with `LIMIT_EXCEEDED`. Default 1024, above the pool's own bounds, for a host that multiplexes its users onto one connection. */
  maxExecutionsPerConnection?: number | undefined;
  /** Milliseconds between WebSocket pings to each client; a client that misses one is dropped. Default 15000. */
  clientPingInterval?: number | undefined;
  /** Open sessions at once; one more is refused (HTTP 503). Default 512. */
  maxConnections?: number | undefined;
  /** Bytes waiting to be sent to one client (it stopped reading) before it is dropped. Default 64 MiB. */
  maxSendBuffer?: number | undefined;
  /** Bytes the requests of one connection may hold while in flight (waiting for a sandbox or running); one more is refused with `LIMIT_EXCEEDED`. Default 64 MiB. */
  maxHeldRequestBytes?: number | undefined;
  /** Bytes the requests of all connections together may hold while in flight; one more is refused with `QUEUE_FULL` (retryable). Default 512 MiB. */
  maxHeldRequestBytesTotal?: number | undefined;
  /** Milliseconds from a TCP connection to its authenticated WebSocket upgrade. Default 5000. */
  handshakeTimeout?: number | undefined;
  /** Sockets one address may hold open before their upgrade is authenticated. Default 32. */
  maxUnauthenticatedPerPeer?: number | undefined;
  /** Milliseconds `close()` waits for running executions before it cancels them. Default 30000. */
  drainTimeout?: number | undefined;
  /** Entries in one session's capnweb export table (calls whose answers the client has not released, stubs handed out); past it the connection is closed. Default 8192. */
  maxRpcExports?: number | undefined;
  /** Entries in one session's capnweb import table (stubs the client passed, calls to them in flight); past it the connection is closed. Default 8192. */
  maxRpcImports?: number | undefined;
  /** Retained executions one connection may hold open at once; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`. Default 16. */
  maxRetainedPerConnection?: number | undefined;
  /** Retained executions one tenant (a token) may hold open at once, its connections open or gone; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`. Default 64. */
  maxRetainedPerTenant?: number | undefined;
  /** The percent of the memory budget one tenant may hold while another is present (a token where the daemon has several, else a connection); beyond it its runs wait. Default 50. */
  tenantMemoryPercent?: number | undefined;
  /** Milliseconds a retained execution may go unused (no `invokeHandle`) before the daemon closes it, whether or not its connection is still open. Default 300000. */
  retainedIdleTimeout?: number | undefined;
  /** Expect HAProxy's PROXY protocol v2 header on every connection, so per-peer bounds and logs see the client's own address. Default false. */
  proxyProtocol?: boolean | undefined;
  /** Names this daemon in the execution ids it gives out. Default `<hostname>:<port>`. */
  daemonId?: string | undefined;
  /** The health and metrics listener (`/healthz`, `/readyz`, `/metrics`). Default: none. */
  admin?: { host?: string | undefined; port: number } | undefined;
  /** The version `protocolVersion()` announces. For tests of the mismatch path only. */
  protocolVersion?: number | undefined;
  /** Told one message per event (connections, executions, refusals). Default: nothing. */
  log?: LogSink | undefined;
}

export const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 8787,
  maxMessageSize: 16 * 1024 * 1024,
  maxExecutionsPerConnection: 1024,
  clientPingInterval: 15_000,
  maxConnections: 512,
  maxSendBuffer: 64 * 1024 * 1024,
  maxHeldRequestBytes: 64 * 1024 * 1024,
  maxHeldRequestBytesTotal: 512 * 1024 * 1024,
  handshakeTimeout: 5_000,
  maxUnauthenticatedPerPeer: 32,
  drainTimeout: 30_000,
  maxRpcExports: 8192,
  maxRpcImports: 8192,
  maxRetainedPerConnection: 16,
  maxRetainedPerTenant: 64,
  tenantMemoryPercent: 50,
  retainedIdleTimeout: 300_000,
  adminHost: '127.0.0.1',
} as const;

/**
 * The server's integer options: the smallest value each takes, and the daemon's flag that sets it,
 * written once for `resolveServerOptions` and the command line (cli-args.ts). In --help order.
 */
export const SERVER_NUMBERS = {
  maxMessageSize: { min: 1, flag: 'max-message-size' },
  maxExecutionsPerConnection: { min: 1, flag: 'max-executions-per-connection' },
  clientPingInterval: { min: 1, flag: 'client-ping-interval' },
  maxConnections: { min: 1, flag: 'max-connections' },
  maxSendBuffer: { min: 1, flag: 'max-send-buffer' },
  maxHeldRequestBytes: { min: 1, flag: 'max-held-request-bytes' },
  maxHeldRequestBytesTotal: { min: 1, flag: 'max-held-request-bytes-total' },
  handshakeTimeout: { min: 1, flag: 'handshake-timeout' },
  maxUnauthenticatedPerPeer: { min: 1, flag: 'max-unauthenticated-per-peer' },
  drainTimeout: { min: 0, flag: 'drain-timeout' },
  maxRpcExports: { min: 1, flag: 'max-rpc-exports' },
  maxRpcImports: { min: 1, flag: 'max-rpc-imports' },
  maxRetainedPerConnection: { min: 1, flag: 'max-retained-per-connection' },
  maxRetainedPerTenant: { min: 1, flag: 'max-retained-per-tenant' },
  tenantMemoryPercent: { min: 1, max: 100, flag: 'tenant-memory-percent' },
  retainedIdleTimeout: { min: 1, flag: 'retained-idle-timeout' },
} as const satisfies Partial<
  Record<keyof ExecutorServerOptions & keyof typeof SERVER_DEFAULTS, { min: number; max?: number; flag: string }>
>;

type ServerNumber = keyof typeof SERVER_NUMBERS;

export interface ServerSettings {
  executor: Executor;
  host: string;
  port: number;
  /** Every token the daemon takes, in the order given; empty: none is asked for. */
  tokens: readonly string[];
  maxMessageSize: number;
  maxExecutionsPerConnection: number;
  clientPingInterval: number;
  maxConnections: number;
  maxSendBuffer: number;
  maxHeldRequestBytes: number;
  maxHeldRequestBytesTotal: number;
  handshakeTimeout: number;
  maxUnauthenticatedPerPeer: number;
  drainTimeout: number;
  maxRpcExports: number;
  maxRpcImports: number;
  maxRetainedPerConnection: number;
  maxRetainedPerTenant: number;
  tenantMemoryPercent: number;
  retainedIdleTimeout: number;
  proxyProtocol: boolean;
  daemonId: string | undefined;
  admin: { host: string; port: number } | undefined;
  protocolVersion: number | undefined;
  log: LogSink;
}

const KNOWN = everyKey<ExecutorServerOptions>({
  executor: true,
  host: true,
  port: true,
  token: true,
  maxMessageSize: true,
  maxExecutionsPerConnection: true,
  clientPingInterval: true,
  maxConnections: true,
  maxSendBuffer: true,
  maxHeldRequestBytes: true,
  maxHeldRequestBytesTotal: true,
  handshakeTimeout: true,
  maxUnauthenticatedPerPeer: true,
  drainTimeout: true,
  maxRpcExports: true,
  maxRpcImports: true,
  maxRetainedPerConnection: true,
  maxRetainedPerTenant: true,
  tenantMemoryPercent: true,
  retainedIdleTimeout: true,
  proxyProtocol: true,
  daemonId: true,
  admin: true,
  protocolVersion: true,
  log: true,
});

function integer(name: string, value: unknown, fallback: number, min = 1, max?: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
    const rule = max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
    throw new TypeError(formatInvalidServerOption(name, rule, value));
  }
  return value;
}

function port(name: string, value: unknown, fallback: number): number {
  const resolved = integer(name, value, fallback, 0);
  if (resolved > MAX_PORT) throw new TypeError(formatInvalidServerOption(name, PORT_RULE, value));
  return resolved;
}

export function resolveServerOptions(options: ExecutorServerOptions): ServerSettings {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(formatInvalidServerOption('', 'an object', options));
  }
  for (const key of Object.keys(options)) {
    if (!(KNOWN as readonly string[]).includes(key)) {
      throw new TypeError(formatUnknownServerOption(key, KNOWN));
    }
  }
  const { executor, token, daemonId, admin, log } = options;
  const serverNumber = (name: ServerNumber) => {
    const rule: { min: number; max?: number } = SERVER_NUMBERS[name];
    return integer(name, options[name], SERVER_DEFAULTS[name], rule.min, rule.max);
  };
  const host = options.host ?? SERVER_DEFAULTS.host;
  if (typeof executor !== 'object' || executor === null)
    throw new TypeError(formatInvalidServerOption('executor', 'an Executor', executor));
  if (typeof host !== 'string' || host === '')
    throw new TypeError(formatInvalidServerOption('host', 'an address', host));
  const tokens = token === undefined ? [] : typeof token === 'string' ? [token] : token;
  if (
    !Array.isArray(tokens) ||
    (Array.isArray(token) && tokens.length === 0) ||
    tokens.some((each) => typeof each !== 'string' || each === '')
  ) {
    throw new TypeError(formatInvalidServerOption('token', 'a non-empty string, or an array of them', token));
  }
  if (tokens.length === 0 && !isLoopbackHost(host)) throw new Error(formatUnsafeBind(host));
  if (daemonId !== undefined && (typeof daemonId !== 'string' || !isValidDaemonId(daemonId))) {
    throw new TypeError(
      formatInvalidServerOption('daemonId', 'a non-empty name without "@", spaces or controls', daemonId),
    );
  }
  if (options.proxyProtocol !== undefined && typeof options.proxyProtocol !== 'boolean')
    throw new TypeError(formatInvalidServerOption('proxyProtocol', 'a boolean', options.proxyProtocol));
  if (log !== undefined && typeof log !== 'function')
    throw new TypeError(formatInvalidServerOption('log', 'a function', log));
  let resolvedAdmin: ServerSettings['admin'];
  if (admin !== undefined) {
    if (typeof admin !== 'object' || admin === null)
      throw new TypeError(formatInvalidServerOption('admin', 'an object { host?, port }', admin));
    const adminHost = admin.host ?? SERVER_DEFAULTS.adminHost;
    if (typeof adminHost !== 'string' || adminHost === '')
      throw new TypeError(formatInvalidServerOption('admin.host', 'an address', adminHost));
    if (admin.port === undefined) throw new TypeError(formatInvalidServerOption('admin.port', PORT_RULE, admin.port));
    resolvedAdmin = { host: adminHost, port: port('admin.port', admin.port, 0) };
  }
  return {
    executor,
    host,
    port: port('port', options.port, SERVER_DEFAULTS.port),
    tokens: [...tokens],
    maxMessageSize: serverNumber('maxMessageSize'),
    maxExecutionsPerConnection: serverNumber('maxExecutionsPerConnection'),
    clientPingInterval: serverNumber('clientPingInterval'),
    maxConnections: serverNumber('maxConnections'),
    maxSendBuffer: serverNumber('maxSendBuffer'),
    maxHeldRequestBytes: serverNumber('maxHeldRequestBytes'),
    maxHeldRequestBytesTotal: serverNumber('maxHeldRequestBytesTotal'),
    handshakeTimeout: serverNumber('handshakeTimeout'),
    maxUnauthenticatedPerPeer: serverNumber('maxUnauthenticatedPerPeer'),
    drainTimeout: serverNumber('drainTimeout'),
    maxRpcExports: serverNumber('maxRpcExports'),
    maxRpcImports: serverNumber('maxRpcImports'),
    maxRetainedPerConnection: serverNumber('maxRetainedPerConnection'),
    maxRetainedPerTenant: serverNumber('maxRetainedPerTenant'),
    tenantMemoryPercent: serverNumber('tenantMemoryPercent'),
    retainedIdleTimeout: serverNumber('retainedIdleTimeout'),
    proxyProtocol: options.proxyProtocol ?? false,
    daemonId,
    admin: resolvedAdmin,
    protocolVersion: options.protocolVersion,
    log: log ?? (() => {}),
  };
}
