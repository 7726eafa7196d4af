/**
 * The bounds among `createExecutorServer`'s options: each an integer option, whose rule text is its
 * bounds' in `createExecutorServer`'s words, in the order --help lists their flags.
 */
import * as v from 'valibot';
import type { NumberBounds, OptionRow } from '../../protocol/option-schema.js';
import { option } from '../../protocol/parse-options.js';
import {
  DAEMON_FDS_RESERVED,
  defaultMaxConnections,
  MAX_CONNECTIONS_CEILING,
  SHED_HEADROOM,
} from '../transport/descriptors.js';

/** A server option's row: `flagHelp` is what its daemon flag does, in --help and docs/remote.md. */
export interface ServerOptionRow extends OptionRow {
  readonly flagHelp?: string;
  /** The default this host computes, where `defaultText` gives the rule: --help shows it beside. */
  readonly hostDefault?: () => number;
}

/** The words of an integer option's bounds, as its row and its refusal say them. */
function integerRule(bounds: NumberBounds): string {
  return bounds.max === undefined ? `an integer >= ${bounds.min}` : `an integer from ${bounds.min} to ${bounds.max}`;
}

type IntegerParts = Omit<ServerOptionRow, 'type' | 'rule' | 'bounds'> & { min: number; max?: number; flag: string };

/** An integer option: an integer within its row's bounds, whose rule text says them. */
function integerOption<const Parts extends IntegerParts>(parts: Parts) {
  const { min, max, ...rest } = parts;
  const bounds: NumberBounds = max === undefined ? { kind: 'integer', min } : { kind: 'integer', min, max };
  const row = { type: 'integer', bounds, rule: integerRule(bounds), ...rest };
  return option(
    v.number(),
    row as Omit<Parts, 'min' | 'max'> & ServerOptionRow & { bounds: NumberBounds; flag: string },
  );
}

export const SERVER_BOUNDS = {
  /** Bytes; a larger incoming message fails alone with `LIMIT_EXCEEDED`. Default 16 MiB. */
  maxMessageBytes: integerOption({
    unit: 'bytes',
    min: 1,
    default: 16 * 1024 * 1024,
    flag: 'max-message-bytes',
    renamedFrom: { name: 'maxMessageSize', flag: 'max-message-size' },
    flagHelp: 'largest incoming message',
    description: 'largest incoming message',
  }),
  /** Concurrent executions (and handle calls) per connection; more fail with `LIMIT_EXCEEDED`. Default 1024, above the pool's own bounds, for a host that multiplexes its users onto one connection. */
  maxExecutionsPerConnection: integerOption({
    unit: 'count',
    min: 1,
    default: 1024,
    flag: 'max-executions-per-connection',
    flagHelp: 'concurrent executions per connection',
    description:
      "concurrent executions and handle calls per connection: an agent host usually multiplexes its users onto one connection, so this stays above the pool's `--max-workers`; lower it where several tenants share a daemon",
  }),
  /** Milliseconds between WebSocket pings to each client; a client that misses one is dropped. Default 15000. */
  clientPingIntervalMs: integerOption({
    unit: 'ms',
    min: 1,
    default: 15_000,
    flag: 'client-ping-interval-ms',
    renamedFrom: { name: 'clientPingInterval', flag: 'client-ping-interval' },
    flagHelp: 'WebSocket ping period; a client missing a pong is dropped',
    description: 'WebSocket ping period; a client that misses a pong is dropped',
  }),
  /**
   * Open sessions at once; one more is refused (HTTP 503). Default: half the file descriptors the
   * process may open beyond 64, at most 512 (`maxConnectionsFor`). A connection that would leave
   * fewer than 32 descriptors for the pool's processes is shed whatever this is.
   */
  maxConnections: integerOption({
    unit: 'count',
    min: 1,
    defaultText: `half the file descriptors the process may open (\`ulimit -n\`) beyond ${DAEMON_FDS_RESERVED} for its own files, the rest left to the pool's processes, at most ${MAX_CONNECTIONS_CEILING}`,
    hostDefault: defaultMaxConnections,
    flag: 'max-connections',
    flagHelp: 'open sessions at once',
    description: `open sessions at once; one more is refused (503). Whatever it is, a connection that would leave the daemon fewer than ${SHED_HEADROOM} descriptors for its sandbox processes is shed at once (503)`,
  }),
  /** Bytes waiting to be sent to one client (it stopped reading) before it is dropped. Default 64 MiB. */
  maxSendBufferBytes: integerOption({
    unit: 'bytes',
    min: 1,
    default: 64 * 1024 * 1024,
    flag: 'max-send-buffer-bytes',
    renamedFrom: { name: 'maxSendBuffer', flag: 'max-send-buffer' },
    flagHelp: 'bytes waiting for a client that stopped reading before it is dropped',
    description: 'bytes waiting for a client that stopped reading before it is dropped',
  }),
  /** Bytes the requests of one connection may hold while in flight (waiting for a sandbox or running); one more is refused with `LIMIT_EXCEEDED`. Default 64 MiB. */
  maxHeldRequestBytes: integerOption({
    unit: 'bytes',
    min: 1,
    default: 64 * 1024 * 1024,
    flag: 'max-held-request-bytes',
    flagHelp: "bytes one connection's requests in flight (waiting or running) may hold",
    description:
      "bytes one connection's requests in flight (waiting for a sandbox process or running) may hold; one more request is refused with `LIMIT_EXCEEDED`",
  }),
  /** Bytes the requests of all connections together may hold while in flight; one more is refused with `QUEUE_FULL` (retryable). Default 512 MiB. */
  maxHeldRequestBytesTotal: integerOption({
    unit: 'bytes',
    unitExempt: 'the total of `maxHeldRequestBytes`, named after it',
    min: 1,
    default: 512 * 1024 * 1024,
    flag: 'max-held-request-bytes-total',
    flagHelp: 'bytes the requests in flight of all connections may hold',
    description:
      'bytes the requests in flight of all connections together may hold; one more is refused with `QUEUE_FULL` (retryable)',
  }),
  /** Milliseconds from a TCP connection to its authenticated WebSocket upgrade. Default 5000. */
  handshakeTimeoutMs: integerOption({
    unit: 'ms',
    min: 1,
    default: 5_000,
    flag: 'handshake-timeout-ms',
    renamedFrom: { name: 'handshakeTimeout', flag: 'handshake-timeout' },
    flagHelp: 'time from connecting to an authenticated upgrade',
    description: 'time from the TCP connection to an authenticated WebSocket upgrade',
  }),
  /** Sockets one address may hold open before their upgrade is authenticated. Default 32. */
  maxUnauthenticatedPerPeer: integerOption({
    unit: 'count',
    min: 1,
    default: 32,
    flag: 'max-unauthenticated-per-peer',
    flagHelp: 'sockets one address may hold before authenticating',
    description: 'sockets one address may hold before its upgrade is authenticated',
  }),
  /** Milliseconds `close()` waits for running executions before it cancels them. Default 30000. */
  drainTimeoutMs: integerOption({
    unit: 'ms',
    min: 0,
    default: 30_000,
    flag: 'drain-timeout-ms',
    renamedFrom: { name: 'drainTimeout', flag: 'drain-timeout' },
    flagHelp: 'on SIGTERM, how long running executions may take to finish before they are cancelled',
    description: 'on SIGTERM, how long running executions may take before they are cancelled',
  }),
  /** Entries in one session's capnweb export table (calls whose answers the client has not released, stubs handed out); past it the connection is closed. Default 8192. */
  maxRpcExports: integerOption({
    unit: 'count',
    min: 1,
    default: 8192,
    flag: 'max-rpc-exports',
    flagHelp:
      "entries in one session's capnweb export table (calls not yet released, stubs handed out) before it is closed",
    description: `entries in one session's capnweb export table (calls whose answers the client has not released, stubs handed out); past it the connection is closed (docs/security.md, "A hostile authenticated tenant")`,
  }),
  /** Entries in one session's capnweb import table (stubs the client passed, calls to them in flight); past it the connection is closed. Default 8192. */
  maxRpcImports: integerOption({
    unit: 'count',
    min: 1,
    default: 8192,
    flag: 'max-rpc-imports',
    flagHelp: "entries in one session's capnweb import table (stubs the client passed) before it is closed",
    description:
      "entries in one session's capnweb import table (stubs the client passed, calls to them in flight); past it the connection is closed",
  }),
  /** Retained executions one connection may hold open at once; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`. Default 16. */
  maxRetainedPerConnection: integerOption({
    unit: 'count',
    min: 1,
    default: 16,
    flag: 'max-retained-per-connection',
    flagHelp: 'retained executions one connection holds open',
    description:
      'retained executions one connection holds open; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`',
  }),
  /** Retained executions one tenant (a token) may hold open at once, its connections open or gone; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`. Default 64. */
  maxRetainedPerTenant: integerOption({
    unit: 'count',
    min: 1,
    default: 64,
    flag: 'max-retained-per-tenant',
    flagHelp: 'retained executions one token holds open, its connections open or gone',
    description:
      'retained executions one token holds open, its connections open or gone; one more `retainHandles` execute fails with `LIMIT_EXCEEDED`',
  }),
  /** Bytes of modules the daemon keeps for each tenant (a token), sent once and named by hash later (docs/protocol.md, "Modules by hash"); 0 keeps none. Default 64 MiB. */
  maxModuleCacheBytes: integerOption({
    unit: 'bytes',
    min: 0,
    default: 64 * 1024 * 1024,
    flag: 'max-module-cache-bytes',
    flagHelp: 'bytes of modules kept for each token, sent once and named by hash later; 0 keeps none',
    description:
      'bytes of modules the daemon keeps for each tenant (a token), sent once with `putModules` and named by hash in later executes, least recently used out; 0 keeps none, so every module crosses inline ([protocol.md](protocol.md#modules-by-hash))',
  }),
  /** The percent of the memory budget one tenant may hold while another is present (a token where the daemon has several, else a connection); beyond it its runs wait. Default 50. */
  tenantMemoryPercent: integerOption({
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
  /** Milliseconds a retained execution may go unused (no `invokeHandle`) before the daemon closes it, whether or not its connection is still open. Default 300000. */
  retainedIdleTimeoutMs: integerOption({
    unit: 'ms',
    min: 1,
    default: 300_000,
    flag: 'retained-idle-timeout-ms',
    renamedFrom: { name: 'retainedIdleTimeout', flag: 'retained-idle-timeout' },
    flagHelp: 'close a retained execution unused this long, its connection open or gone',
    description: 'a retained execution unused this long is closed, its connection open or gone',
  }),
};
