/**
 * The options of `createExecutorServer`: their defaults, and the checks that name the option a
 * value broke. The CLI maps each flag onto one of these (cli-args.ts).
 */
import {
  meetsBounds,
  type NumberBounds,
  nearestOption,
  type OptionRow,
  takeRenamed,
} from '../../protocol/option-schema.js';
import type { Executor } from '../../protocol/types.js';
import { DEFAULT_LOG_FORMAT, LOG_FORMATS, type LogSink } from '../observe/log.js';
import { isValidDaemonId } from '../retained/handle-ids.js';
import { formatInvalidServerOption, formatUnknownServerOption, formatUnsafeBind } from '../texts.js';
import { isLoopbackHost } from '../transport/auth.js';
import {
  DAEMON_FDS_RESERVED,
  defaultMaxConnections,
  MAX_CONNECTIONS_CEILING,
  SHED_HEADROOM,
} from '../transport/descriptors.js';

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
  maxMessageBytes?: number | undefined;
  /** @deprecated Renamed `maxMessageBytes`; still taken, with a warning. */
  maxMessageSize?: number | undefined;
  /** Concurrent executions (and handle calls) per connection; more fail with `LIMIT_EXCEEDED`. Default 1024, above the pool's own bounds, for a host that multiplexes its users onto one connection. */
  maxExecutionsPerConnection?: number | undefined;
  /** Milliseconds between WebSocket pings to each client; a client that misses one is dropped. Default 15000. */
  clientPingIntervalMs?: number | undefined;
  /** @deprecated Renamed `clientPingIntervalMs`; still taken, with a warning. */
  clientPingInterval?: number | undefined;
  /**
   * Open sessions at once; one more is refused (HTTP 503). Default: half the file descriptors the
   * process may open beyond 64, at most 512 (`maxConnectionsFor`). A connection that would leave
   * fewer than 32 descriptors for the pool's processes is shed whatever this is.
   */
  maxConnections?: number | undefined;
  /** Bytes waiting to be sent to one client (it stopped reading) before it is dropped. Default 64 MiB. */
  maxSendBufferBytes?: number | undefined;
  /** @deprecated Renamed `maxSendBufferBytes`; still taken, with a warning. */
  maxSendBuffer?: number | undefined;
  /** Bytes the requests of one connection may hold while in flight (waiting for a sandbox or running); one more is refused with `LIMIT_EXCEEDED`. Default 64 MiB. */
  maxHeldRequestBytes?: number | undefined;
  /** Bytes the requests of all connections together may hold while in flight; one more is refused with `QUEUE_FULL` (retryable). Default 512 MiB. */
  maxHeldRequestBytesTotal?: number | undefined;
  /** Milliseconds from a TCP connection to its authenticated WebSocket upgrade. Default 5000. */
  handshakeTimeoutMs?: number | undefined;
  /** @deprecated Renamed `handshakeTimeoutMs`; still taken, with a warning. */
  handshakeTimeout?: number | undefined;
  /** Sockets one address may hold open before their upgrade is authenticated. Default 32. */
  maxUnauthenticatedPerPeer?: number | undefined;
  /** Milliseconds `close()` waits for running executions before it cancels them. Default 30000. */
  drainTimeoutMs?: number | undefined;
  /** @deprecated Renamed `drainTimeoutMs`; still taken, with a warning. */
  drainTimeout?: number | undefined;
  /** Entries in one session's capnweb export table (calls whose answers the client has not released, stubs handed out); past it the connection is closed. Default 8192. */
  maxRpcExports?: number | undefined;
  /** Entries in one session's capnweb import table (stubs the client passed, calls to them in flight); past it the connection is closed. Default 8192. */
  maxRpcImports?: number | undefined;
  /** Retained executions one connection may hold open at once; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`. Default 16. */
  maxRetainedPerConnection?: number | undefined;
  /** Retained executions one tenant (a token) may hold open at once, its connections open or gone; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`. Default 64. */
  maxRetainedPerTenant?: number | undefined;
  /** Bytes of modules the daemon keeps for each tenant (a token), sent once and named by hash later (docs/protocol.md, "Modules by hash"); 0 keeps none. Default 64 MiB. */
  maxModuleCacheBytes?: number | undefined;
  /** The percent of the memory budget one tenant may hold while another is present (a token where the daemon has several, else a connection); beyond it its runs wait. Default 50. */
  tenantMemoryPercent?: number | undefined;
  /** Milliseconds a retained execution may go unused (no `invokeHandle`) before the daemon closes it, whether or not its connection is still open. Default 300000. */
  retainedIdleTimeoutMs?: number | undefined;
  /** @deprecated Renamed `retainedIdleTimeoutMs`; still taken, with a warning. */
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

/** The old names of renamed options, which a row's `renamedFrom` names and the rows do not list. */
type RenamedServerOption =
  | 'maxMessageSize'
  | 'clientPingInterval'
  | 'maxSendBuffer'
  | 'handshakeTimeout'
  | 'drainTimeout'
  | 'retainedIdleTimeout';

/** A server option's row: `flagHelp` is what its daemon flag does, in --help and docs/remote.md. */
export interface ServerOptionRow extends OptionRow {
  readonly flagHelp?: string;
  /** The default this host computes, where `defaultText` gives the rule: --help shows it beside. */
  readonly hostDefault?: () => number;
}

/** An integer option's row, in `createExecutorServer`'s words for its rule. */
/** The words of an integer option's bounds, as its row and its refusal say them. */
function integerRule(bounds: NumberBounds): string {
  return bounds.max === undefined ? `an integer >= ${bounds.min}` : `an integer from ${bounds.min} to ${bounds.max}`;
}

function integerRow<
  const Parts extends Omit<ServerOptionRow, 'type' | 'rule' | 'bounds'> & { min: number; max?: number },
>(
  parts: Parts,
): Omit<Parts, 'min' | 'max'> & ServerOptionRow & { bounds: NumberBounds; default: number; flag: string } {
  const { min, max, ...rest } = parts;
  const bounds: NumberBounds = max === undefined ? { kind: 'integer', min } : { kind: 'integer', min, max };
  return { type: 'integer', bounds, rule: integerRule(bounds), ...rest } as never;
}

/**
 * The options of `createExecutorServer`, one row each, in the order --help lists their flags. Their
 * defaults, their rules (`SERVER_NUMBERS`) and the daemon's flags are derived from these rows.
 */
export const SERVER_ROWS = {
  executor: { type: 'object', rule: 'an Executor', description: 'the native executor every connection shares' },
  host: {
    type: 'string',
    default: '127.0.0.1',
    rule: 'an address',
    flag: 'host',
    flagHelp: 'address to bind; a non-loopback address needs a token',
    description: 'address to bind; a non-loopback address needs a token',
  },
  port: {
    type: 'integer',
    unit: 'count',
    default: 8787,
    rule: PORT_RULE,
    flag: 'port',
    flagHelp: 'port (0 picks a free one)',
    description: 'port; `0` picks a free one (read it from the `listening on` line)',
  },
  token: {
    type: 'string',
    rule: 'a non-empty string, or an array of them',
    flag: 'token',
    env: TOKEN_ENV,
    defaultText: `\`$${TOKEN_ENV}\`, else none`,
    flagHelp: 'bearer token clients must send; given more than once, each token is a tenant of its own',
    description:
      'the bearer token clients must send; given more than once, the daemon takes each, and each token is a tenant of its own',
  },
  maxMessageBytes: integerRow({
    unit: 'bytes',
    min: 1,
    default: 16 * 1024 * 1024,
    flag: 'max-message-bytes',
    renamedFrom: { name: 'maxMessageSize', flag: 'max-message-size' },
    flagHelp: 'largest incoming message',
    description: 'largest incoming message',
  }),
  maxExecutionsPerConnection: integerRow({
    unit: 'count',
    min: 1,
    default: 1024,
    flag: 'max-executions-per-connection',
    flagHelp: 'concurrent executions per connection',
    description:
      "concurrent executions and handle calls per connection: an agent host usually multiplexes its users onto one connection, so this stays above the pool's `--max-workers`; lower it where several tenants share a daemon",
  }),
  clientPingIntervalMs: integerRow({
    unit: 'ms',
    min: 1,
    default: 15_000,
    flag: 'client-ping-interval-ms',
    renamedFrom: { name: 'clientPingInterval', flag: 'client-ping-interval' },
    flagHelp: 'WebSocket ping period; a client missing a pong is dropped',
    description: 'WebSocket ping period; a client that misses a pong is dropped',
  }),
  maxConnections: integerRow({
    unit: 'count',
    min: 1,
    defaultText: `half the file descriptors the process may open (\`ulimit -n\`) beyond ${DAEMON_FDS_RESERVED} for its own files, the rest left to the pool's processes, at most ${MAX_CONNECTIONS_CEILING}`,
    hostDefault: defaultMaxConnections,
    flag: 'max-connections',
    flagHelp: 'open sessions at once',
    description: `open sessions at once; one more is refused (503). Whatever it is, a connection that would leave the daemon fewer than ${SHED_HEADROOM} descriptors for its sandbox processes is shed at once (503)`,
  }),
  maxSendBufferBytes: integerRow({
    unit: 'bytes',
    min: 1,
    default: 64 * 1024 * 1024,
    flag: 'max-send-buffer-bytes',
    renamedFrom: { name: 'maxSendBuffer', flag: 'max-send-buffer' },
    flagHelp: 'bytes waiting for a client that stopped reading before it is dropped',
    description: 'bytes waiting for a client that stopped reading before it is dropped',
  }),
  maxHeldRequestBytes: integerRow({
    unit: 'bytes',
    min: 1,
    default: 64 * 1024 * 1024,
    flag: 'max-held-request-bytes',
    flagHelp: "bytes one connection's requests in flight (waiting or running) may hold",
    description:
      "bytes one connection's requests in flight (waiting for a sandbox process or running) may hold; one more request is refused with `LIMIT_EXCEEDED`",
  }),
  maxHeldRequestBytesTotal: integerRow({
    unit: 'bytes',
    unitExempt: 'the total of `maxHeldRequestBytes`, named after it',
    min: 1,
    default: 512 * 1024 * 1024,
    flag: 'max-held-request-bytes-total',
    flagHelp: 'bytes the requests in flight of all connections may hold',
    description:
      'bytes the requests in flight of all connections together may hold; one more is refused with `QUEUE_FULL` (retryable)',
  }),
  handshakeTimeoutMs: integerRow({
    unit: 'ms',
    min: 1,
    default: 5_000,
    flag: 'handshake-timeout-ms',
    renamedFrom: { name: 'handshakeTimeout', flag: 'handshake-timeout' },
    flagHelp: 'time from connecting to an authenticated upgrade',
    description: 'time from the TCP connection to an authenticated WebSocket upgrade',
  }),
  maxUnauthenticatedPerPeer: integerRow({
    unit: 'count',
    min: 1,
    default: 32,
    flag: 'max-unauthenticated-per-peer',
    flagHelp: 'sockets one address may hold before authenticating',
    description: 'sockets one address may hold before its upgrade is authenticated',
  }),
  drainTimeoutMs: integerRow({
    unit: 'ms',
    min: 0,
    default: 30_000,
    flag: 'drain-timeout-ms',
    renamedFrom: { name: 'drainTimeout', flag: 'drain-timeout' },
    flagHelp: 'on SIGTERM, how long running executions may take to finish before they are cancelled',
    description: 'on SIGTERM, how long running executions may take before they are cancelled',
  }),
  maxRpcExports: integerRow({
    unit: 'count',
    min: 1,
    default: 8192,
    flag: 'max-rpc-exports',
    flagHelp:
      "entries in one session's capnweb export table (calls not yet released, stubs handed out) before it is closed",
    description: `entries in one session's capnweb export table (calls whose answers the client has not released, stubs handed out); past it the connection is closed (docs/security.md, "A hostile authenticated tenant")`,
  }),
  maxRpcImports: integerRow({
    unit: 'count',
    min: 1,
    default: 8192,
    flag: 'max-rpc-imports',
    flagHelp: "entries in one session's capnweb import table (stubs the client passed) before it is closed",
    description:
      "entries in one session's capnweb import table (stubs the client passed, calls to them in flight); past it the connection is closed",
  }),
  maxRetainedPerConnection: integerRow({
    unit: 'count',
    min: 1,
    default: 16,
    flag: 'max-retained-per-connection',
    flagHelp: 'retained executions one connection holds open',
    description:
      'retained executions one connection holds open; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`',
  }),
  maxRetainedPerTenant: integerRow({
    unit: 'count',
    min: 1,
    default: 64,
    flag: 'max-retained-per-tenant',
    flagHelp: 'retained executions one token holds open, its connections open or gone',
    description:
      'retained executions one token holds open, its connections open or gone; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`',
  }),
  maxModuleCacheBytes: integerRow({
    unit: 'bytes',
    min: 0,
    default: 64 * 1024 * 1024,
    flag: 'max-module-cache-bytes',
    flagHelp: 'bytes of modules kept for each token, sent once and named by hash later; 0 keeps none',
    description:
      'bytes of modules the daemon keeps for each tenant (a token), sent once with `putModules` and named by hash in later executes, least recently used out; 0 keeps none, so every module crosses inline ([protocol.md](protocol.md#modules-by-hash))',
  }),
  tenantMemoryPercent: integerRow({
    unit: 'percent',
    min: 1,
    max: 100,
    default: 50,
    flag: 'tenant-memory-percent',
    flagHelp:
      'percent of `--memory-budget-mb` one tenant (a token where there are several, else a connection) may hold while another is connected; beyond it its runs wait',
    description:
      'percent of `--memory-budget-mb` one tenant (a token where the daemon has several, else a connection) may hold while another tenant is connected; beyond it its runs wait (docs/security.md, "Tenants and the memory budget")',
  }),
  retainedIdleTimeoutMs: integerRow({
    unit: 'ms',
    min: 1,
    default: 300_000,
    flag: 'retained-idle-timeout-ms',
    renamedFrom: { name: 'retainedIdleTimeout', flag: 'retained-idle-timeout' },
    flagHelp: 'close a retained execution unused this long, its connection open or gone',
    description: 'a retained execution unused this long is closed, its connection open or gone',
  }),
  proxyProtocol: {
    type: 'boolean',
    default: false,
    rule: 'a boolean',
    flag: 'proxy-protocol',
    flagHelp:
      "expect HAProxy's PROXY protocol v2 header on every connection: per-peer bounds and logs see the client's address",
    description:
      "every connection must open with HAProxy's PROXY protocol v2 header; per-peer bounds and the log use the client address it names (docs/fleet.md)",
  },
  daemonId: {
    type: 'string',
    defaultText: '`<hostname>:<port>`',
    rule: 'a non-empty name without "@", spaces or controls',
    flag: 'daemon-id',
    flagHelp: 'names this daemon in retained execution ids',
    description: 'names this daemon in retained execution ids',
  },
  admin: {
    type: 'object',
    rule: 'an object { host?, port }',
    description: 'the health and metrics listener (`/healthz`, `/readyz`, `/metrics`)',
  },
  protocolVersion: { type: 'integer', rule: 'a number', description: 'for tests of the version mismatch only' },
  log: { type: 'function', rule: 'a function', description: 'told one message per event' },
} as const satisfies Record<Exclude<keyof ExecutorServerOptions, RenamedServerOption>, ServerOptionRow>;

/**
 * The command line's own flags, beside those of `createExecutorServer`'s options: the admin
 * listener's (`admin.port`, `admin.host`) and the daemon process's (`run-daemon.ts`).
 */
export const DAEMON_ROWS = {
  'admin.port': {
    type: 'integer',
    defaultText: 'off',
    rule: PORT_RULE,
    flag: 'admin-port',
    flagHelp: 'serve /healthz, /readyz and /metrics on this port',
    description: 'serve `/healthz`, `/readyz` and `/metrics` on this port (docs/fleet.md)',
  },
  'admin.host': {
    type: 'string',
    default: '127.0.0.1',
    rule: 'an address',
    flag: 'admin-host',
    flagHelp: 'address of the admin listener',
    description: 'address of the admin listener',
  },
  logFormat: {
    type: 'choice',
    default: DEFAULT_LOG_FORMAT,
    rule: LOG_FORMATS.join(' or '),
    flag: 'log-format',
    flagHelp: 'log lines as timestamped text or JSON',
    description: 'timestamped text lines, or one JSON object per line',
  },
  detached: {
    type: 'boolean',
    default: false,
    rule: 'a boolean',
    flag: 'detached',
    flagHelp: 'keep serving when the parent process exits',
    description: 'keep serving when the parent process exits (nohup and the like)',
  },
} as const satisfies Record<string, ServerOptionRow>;

/** The defaults of the server's options, from their rows; `adminHost`: the admin listener's. */
export const SERVER_DEFAULTS = {
  host: SERVER_ROWS.host.default,
  port: SERVER_ROWS.port.default,
  ...(Object.fromEntries(
    Object.entries(SERVER_ROWS).flatMap(([name, row]) =>
      'bounds' in row ? [[name, 'hostDefault' in row ? row.hostDefault() : row.default]] : [],
    ),
  ) as { [K in ServerNumber]: number }),
  adminHost: DAEMON_ROWS['admin.host'].default,
} as const;

type NumberRowName = {
  [K in keyof typeof SERVER_ROWS]: (typeof SERVER_ROWS)[K] extends { bounds: NumberBounds } ? K : never;
}[keyof typeof SERVER_ROWS];

/**
 * The server's integer options: the smallest value each takes, and the daemon's flag that sets it,
 * derived from the rows for `resolveServerOptions` and the command line (cli-args.ts). In --help order.
 */
export const SERVER_NUMBERS = Object.fromEntries(
  Object.entries(SERVER_ROWS).flatMap(([name, row]) =>
    'bounds' in row ? [[name, { ...row.bounds, flag: row.flag }]] : [],
  ),
) as unknown as { readonly [K in NumberRowName]: NumberBounds & { flag: string } };

type ServerNumber = NumberRowName;

export interface ServerSettings {
  executor: Executor;
  host: string;
  port: number;
  /** Every token the daemon takes, in the order given; empty: none is asked for. */
  tokens: readonly string[];
  maxMessageBytes: number;
  maxExecutionsPerConnection: number;
  clientPingIntervalMs: number;
  maxConnections: number;
  maxSendBufferBytes: number;
  maxHeldRequestBytes: number;
  maxHeldRequestBytesTotal: number;
  handshakeTimeoutMs: number;
  maxUnauthenticatedPerPeer: number;
  drainTimeoutMs: number;
  maxRpcExports: number;
  maxRpcImports: number;
  maxRetainedPerConnection: number;
  maxRetainedPerTenant: number;
  maxModuleCacheBytes: number;
  tenantMemoryPercent: number;
  retainedIdleTimeoutMs: number;
  proxyProtocol: boolean;
  daemonId: string | undefined;
  admin: { host: string; port: number } | undefined;
  protocolVersion: number | undefined;
  log: LogSink;
}

/** Every option's name, from the rows, as a refusal lists them. */
const KNOWN = Object.keys(SERVER_ROWS);

/** An integer option checked against its bounds (a row's), refused in their words; its default when undefined. */
function integer(name: string, value: unknown, fallback: number, bounds: NumberBounds): number {
  if (value === undefined) return fallback;
  if (!meetsBounds(bounds, value)) throw new TypeError(formatInvalidServerOption(name, integerRule(bounds), value));
  return value;
}

function port(name: string, value: unknown, fallback: number): number {
  const resolved = integer(name, value, fallback, { kind: 'integer', min: 0 });
  if (resolved > MAX_PORT) throw new TypeError(formatInvalidServerOption(name, PORT_RULE, value));
  return resolved;
}

export function resolveServerOptions(given: ExecutorServerOptions): ServerSettings {
  if (typeof given !== 'object' || given === null) {
    throw new TypeError(formatInvalidServerOption('', 'an object', given));
  }
  const options = takeRenamed('createExecutorServer()', given, SERVER_ROWS);
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) {
      throw new TypeError(formatUnknownServerOption(key, KNOWN, nearestOption(key, KNOWN)));
    }
  }
  const { executor, token, daemonId, admin, log } = options;
  const serverNumber = (name: ServerNumber) => {
    return integer(name, options[name], SERVER_DEFAULTS[name], SERVER_NUMBERS[name]);
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
    maxMessageBytes: serverNumber('maxMessageBytes'),
    maxExecutionsPerConnection: serverNumber('maxExecutionsPerConnection'),
    clientPingIntervalMs: serverNumber('clientPingIntervalMs'),
    maxConnections: serverNumber('maxConnections'),
    maxSendBufferBytes: serverNumber('maxSendBufferBytes'),
    maxHeldRequestBytes: serverNumber('maxHeldRequestBytes'),
    maxHeldRequestBytesTotal: serverNumber('maxHeldRequestBytesTotal'),
    handshakeTimeoutMs: serverNumber('handshakeTimeoutMs'),
    maxUnauthenticatedPerPeer: serverNumber('maxUnauthenticatedPerPeer'),
    drainTimeoutMs: serverNumber('drainTimeoutMs'),
    maxRpcExports: serverNumber('maxRpcExports'),
    maxRpcImports: serverNumber('maxRpcImports'),
    maxRetainedPerConnection: serverNumber('maxRetainedPerConnection'),
    maxRetainedPerTenant: serverNumber('maxRetainedPerTenant'),
    maxModuleCacheBytes: serverNumber('maxModuleCacheBytes'),
    tenantMemoryPercent: serverNumber('tenantMemoryPercent'),
    retainedIdleTimeoutMs: serverNumber('retainedIdleTimeoutMs'),
    proxyProtocol: options.proxyProtocol ?? false,
    daemonId,
    admin: resolvedAdmin,
    protocolVersion: options.protocolVersion,
    log: log ?? (() => {}),
  };
}
