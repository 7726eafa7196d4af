/**
 * The options of `createExecutorServer`, parsed once by their schema (server-schema.ts), with the
 * rule between them (a non-loopback host needs a token) and their defaults. A refusal names the
 * option a value broke; an unknown one gets the nearest name, a renamed one is taken under its old
 * name with a warning. The CLI maps each flag onto one of these (cli-args.ts).
 */
import type * as v from 'valibot';
import type { NumberBounds } from '../../protocol/option-schema.js';
import { takeRenamed } from '../../protocol/option-schema.js';
import { type OptionTexts, parseOptions, rowsOf } from '../../protocol/parse-options.js';
import type { Executor } from '../../protocol/types.js';
import type { LogSink } from '../observe/log.js';
import { formatInvalidServerOption, formatUnknownServerOption, formatUnsafeBind } from '../texts.js';
import { isLoopbackHost } from '../transport/auth.js';
import { DAEMON_ROWS, SERVER_SCHEMA } from './server-schema.js';

export type { ServerOptionRow } from './server-bounds.js';
export { DAEMON_ROWS, MAX_PORT, TOKEN_ENV } from './server-schema.js';

/** What `createExecutorServer(options)` takes, with the old names of renamed options. */
export type ExecutorServerOptions = v.InferInput<typeof SERVER_SCHEMA> & {
  /** @deprecated Renamed `maxMessageBytes`; still taken, with a warning. */
  maxMessageSize?: number | undefined;
  /** @deprecated Renamed `clientPingIntervalMs`; still taken, with a warning. */
  clientPingInterval?: number | undefined;
  /** @deprecated Renamed `maxSendBufferBytes`; still taken, with a warning. */
  maxSendBuffer?: number | undefined;
  /** @deprecated Renamed `handshakeTimeoutMs`; still taken, with a warning. */
  handshakeTimeout?: number | undefined;
  /** @deprecated Renamed `drainTimeoutMs`; still taken, with a warning. */
  drainTimeout?: number | undefined;
  /** @deprecated Renamed `retainedIdleTimeoutMs`; still taken, with a warning. */
  retainedIdleTimeout?: number | undefined;
};

/**
 * The options of `createExecutorServer`, one row each, read back from the schema in the order
 * --help lists their flags. Their defaults, their rules (`SERVER_NUMBERS`) and the daemon's flags
 * are derived from these rows.
 */
export const SERVER_ROWS = rowsOf(SERVER_SCHEMA);

type NumberRowName = {
  [K in keyof typeof SERVER_ROWS]: (typeof SERVER_ROWS)[K] extends { bounds: NumberBounds } ? K : never;
}[keyof typeof SERVER_ROWS];

/** The defaults of the server's options, from their rows; `adminHost`: the admin listener's. */
export const SERVER_DEFAULTS = {
  host: SERVER_ROWS.host.default,
  port: SERVER_ROWS.port.default,
  ...(Object.fromEntries(
    Object.entries(SERVER_ROWS).flatMap(([name, row]) =>
      'bounds' in row ? [[name, 'hostDefault' in row ? row.hostDefault() : row.default]] : [],
    ),
  ) as { [K in NumberRowName]: number }),
  adminHost: DAEMON_ROWS['admin.host'].default,
} as const;

/**
 * The server's integer options: the smallest value each takes, and the daemon's flag that sets it,
 * derived from the rows for the command line (cli-args.ts). In --help order.
 */
export const SERVER_NUMBERS = Object.fromEntries(
  Object.entries(SERVER_ROWS).flatMap(([name, row]) =>
    'bounds' in row ? [[name, { ...row.bounds, flag: row.flag }]] : [],
  ),
) as unknown as { readonly [K in NumberRowName]: NumberBounds & { flag: string } };

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

const SERVER_TEXTS: OptionTexts = {
  notObject: (value) => formatInvalidServerOption('', 'an object', value),
  unknown: formatUnknownServerOption,
  invalid: formatInvalidServerOption,
};

export function resolveServerOptions(given: ExecutorServerOptions): ServerSettings {
  const options = parseOptions(
    SERVER_SCHEMA,
    takeRenamed('createExecutorServer()', given, SERVER_ROWS),
    SERVER_TEXTS,
    (text) => new TypeError(text),
  );
  const { token, admin } = options;
  const host = options.host ?? SERVER_DEFAULTS.host;
  const tokens = token === undefined ? [] : typeof token === 'string' ? [token] : [...token];
  if (tokens.length === 0 && !isLoopbackHost(host)) throw new Error(formatUnsafeBind(host));
  return {
    executor: options.executor,
    host,
    port: options.port,
    tokens,
    maxMessageBytes: options.maxMessageBytes,
    maxExecutionsPerConnection: options.maxExecutionsPerConnection,
    clientPingIntervalMs: options.clientPingIntervalMs,
    maxConnections: options.maxConnections ?? SERVER_DEFAULTS.maxConnections,
    maxSendBufferBytes: options.maxSendBufferBytes,
    maxHeldRequestBytes: options.maxHeldRequestBytes,
    maxHeldRequestBytesTotal: options.maxHeldRequestBytesTotal,
    handshakeTimeoutMs: options.handshakeTimeoutMs,
    maxUnauthenticatedPerPeer: options.maxUnauthenticatedPerPeer,
    drainTimeoutMs: options.drainTimeoutMs,
    maxRpcExports: options.maxRpcExports,
    maxRpcImports: options.maxRpcImports,
    maxRetainedPerConnection: options.maxRetainedPerConnection,
    maxRetainedPerTenant: options.maxRetainedPerTenant,
    maxModuleCacheBytes: options.maxModuleCacheBytes,
    tenantMemoryPercent: options.tenantMemoryPercent,
    retainedIdleTimeoutMs: options.retainedIdleTimeoutMs,
    proxyProtocol: options.proxyProtocol,
    daemonId: options.daemonId,
    admin: admin === undefined ? undefined : { host: admin.host ?? SERVER_DEFAULTS.adminHost, port: admin.port },
    protocolVersion: options.protocolVersion,
    log: options.log ?? (() => {}),
  };
}
