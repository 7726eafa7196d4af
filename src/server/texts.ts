/** Every text the daemon composes: log lines, refusals and the errors its bounds raise. */

import { optionRuleText } from '../isolate/daemon.js';
import { describeValue } from '../protocol/describe-value.js';
import { formatDidYouMean } from '../protocol/texts.js';

export function formatListening(url: string): string {
  return `listening on ${url}`;
}

/** Written once to the other stream when stdout or stderr fails (its reader went away). */
export function formatStdioBroken(stream: 'stdout' | 'stderr', error: Error): string {
  const code = (error as { code?: unknown }).code;
  return `codemode-executor: ${stream} failed (${typeof code === 'string' ? code : error.message}); the daemon keeps serving, drops what it would write there and counts it in codemode_executor_log_lines_dropped_total{stream="${stream}"}`;
}

export function formatConnectionOpened(connection: number, peer: string): string {
  return `connection ${connection} opened from ${peer}`;
}

export function formatConnectionClosed(connection: number, executions: number): string {
  return `connection ${connection} closed after ${executions} execution${executions === 1 ? '' : 's'}`;
}

export function formatConnectionRefused(peer: string, reason: string): string {
  return `connection refused from ${peer}: ${reason}`;
}

export const TOKEN_MISSING =
  'no bearer token: the daemon requires one (--token or CODEMODE_EXECUTOR_TOKEN), and the upgrade carried no "Authorization: Bearer" header';
export const TOKEN_WRONG =
  "wrong bearer token: the upgrade's Authorization header carried a token that is not the daemon's";
export const SESSION_REFUSED_DRAINING =
  'the daemon is shutting down and opens no new sessions: connect to another daemon';

export function formatTooManySessions(limit: number): string {
  return `the daemon already has ${limit} open session${limit === 1 ? '' : 's'}, its limit (--max-connections): connect to another daemon`;
}

/** A connection shed because the daemon's file descriptors run short (descriptors.ts). */
export function formatDescriptorsShort(open: number, limit: number, headroom: number): string {
  return `the daemon holds ${open} of the ${limit} file descriptors it may open (ulimit -n) and keeps the last ${headroom} for its sandbox processes, so it sheds new connections before EMFILE until some close: raise \`ulimit -n\` or lower --max-connections; connect to another daemon`;
}

/** The listener's accept failed for want of descriptors: the daemon goes on with what it has open. */
export function formatAcceptFailed(code: string, limit: number | undefined): string {
  return `accepting a connection failed with ${code}: the daemon has no file descriptor left (its limit is ${limit ?? 'unknown here'}, ulimit -n); raise \`ulimit -n\` or lower --max-connections. The open sessions go on, and connections are accepted again once descriptors are free`;
}

export function formatTooManyUnauthenticated(address: string, pending: number): string {
  return `${address} already holds ${pending} socket${pending === 1 ? '' : 's'} not yet upgraded to an authenticated session, the per-address limit (--max-unauthenticated-per-peer)`;
}

export function formatHandshakeTimedOut(timeout: number): string {
  return `no authenticated WebSocket upgrade within ${timeout} ms of connecting (--handshake-timeout-ms)`;
}

/** What a refusal log counts: connections refused at the gate, or calls and messages on a session. */
export type RefusedThing = 'connection' | 'call';

/** The line that sums up what a refusal window held back of one kind. */
export function formatRefusalsSuppressed(thing: RefusedThing, count: number, kind: string, windowMs: number): string {
  return `${count} more ${thing}${count === 1 ? '' : 's'} refused (${kind}) in the last ${windowMs / 1000} s; not logged one by one`;
}

export type ExecutionKind = 'execute' | 'invokeHandle';

export function formatExecutionSettled(
  connection: number,
  execution: number,
  kind: ExecutionKind,
  outcome: string,
  milliseconds: number,
  traceId?: string,
): string {
  const trace = traceId === undefined ? '' : ` trace_id=${traceId}`;
  return `connection ${connection} ${kind} ${execution} ${outcome} in ${milliseconds} ms${trace}`;
}

/** Why a connection's running calls were given up when its client went away. */
export const CLIENT_GONE = 'the client is gone';

export function formatExecutionCancelled(
  connection: number,
  execution: number,
  kind: ExecutionKind,
  why: string,
): string {
  return `connection ${connection} ${kind} ${execution} cancelled: ${why}`;
}

export function formatExecutionRefused(connection: number, kind: ExecutionKind, reason: string): string {
  return `connection ${connection} refused ${kind}: ${reason}`;
}

export function formatHeldBytesPerConnection(held: number, bytes: number, limit: number): string {
  return `This connection's requests in flight already hold ${held} bytes, and this one of ${bytes} bytes would pass the executor daemon's per-connection limit of ${limit} bytes (--max-held-request-bytes, maxHeldRequestBytes): wait for some to settle, or send smaller requests`;
}

export function formatHeldBytesTotal(held: number, bytes: number, limit: number): string {
  return `The executor daemon's requests in flight already hold ${held} bytes across all connections, and this one of ${bytes} bytes would pass its limit of ${limit} bytes (--max-held-request-bytes-total, maxHeldRequestBytesTotal): try again shortly, or another daemon`;
}

export function formatClientDropped(connection: number, reason: string): string {
  return `connection ${connection} dropped: ${reason}`;
}

export function formatLeaseExpired(lease: number): string {
  return `the client was not heard from for its heartbeat lease of ${lease} ms, so it counts the connection broken`;
}

export function formatSendBufferExceeded(buffered: number, limit: number): string {
  return `the client stopped reading: ${buffered} bytes wait to be sent, past the limit of ${limit} bytes (--max-send-buffer-bytes)`;
}

export function formatInvalidCancelToken(token: unknown): string {
  return `cancelToken must be a non-empty string, got ${describeValue(token)}`;
}

export function formatDuplicateCancelToken(token: string): string {
  return `cancelToken ${JSON.stringify(token)} already names a running call on this connection; a token names one call at a time`;
}

export function formatMessageTooLarge(size: number, limit: number): string {
  return `A message of ${size} bytes exceeds the executor daemon's limit of ${limit} bytes (--max-message-bytes)`;
}

export function formatTooManyExecutions(limit: number): string {
  return `This connection already runs ${limit} execution${limit === 1 ? '' : 's'}, the executor daemon's per-connection limit (--max-executions-per-connection)`;
}

export function formatUnsafeBind(host: string): string {
  return `Refusing to bind ${host} without a token: a non-loopback address needs --token or the CODEMODE_EXECUTOR_TOKEN environment variable`;
}

export function formatDraining(running: number): string {
  return `shutting down: draining ${running} running execution${running === 1 ? '' : 's'}`;
}

export const STOPPED = 'stopped';

export function formatInvalidServerOption(name: string, expected: string, value: unknown): string {
  return `createExecutorServer(): ${name ? `options.${name}` : 'options'} must be ${expected}, got ${describeValue(value)}`;
}

export function formatUnknownServerOption(name: string, known: readonly string[], nearest?: string): string {
  return `createExecutorServer() has no option ${name}${formatDidYouMean(nearest)}; the options are ${known.join(', ')}`;
}

export const UPGRADE_REQUIRED = 'This is a codemode executor daemon: connect with a WebSocket (see docs/remote.md)';

export const BINARY_MESSAGE = 'Received a binary WebSocket message; the executor protocol speaks text';

export function formatInvalidOutboundMode(mode: unknown): string {
  return `outboundMode must be "default", "blocked" or "stub", got ${JSON.stringify(mode) ?? String(mode)}`;
}

export function formatRequestNotObject(method: string, got: string): string {
  return `${method}: the request must be an object, got ${got}`;
}

export function formatFieldInvalid(method: string, field: string, expected: string, got: string): string {
  return `${method}: request.${field} must be ${expected}, got ${got}`;
}

export function formatFieldUnknown(method: string, field: string, known: readonly string[]): string {
  return `${method}: request.${field} is not a field of the wire request; its fields are ${known.join(', ')}`;
}

export function formatArgumentInvalid(method: string, argument: string, expected: string, got: string): string {
  return `${method}: ${argument} must be ${expected}, got ${got}`;
}

export const OUTBOUND_STUB_MISSING = 'outboundMode "stub" needs an outbound function on the request';

export function formatRefusedMessage(connection: number, reason: string): string {
  return `connection ${connection} refused a message: ${reason}`;
}

/** The close reason every client socket gets when the daemon stops. */
export const SOCKET_CLOSED_ON_STOP = 'executor daemon stopped';

export function formatHandleElsewhere(executionId: string, owner: string, self: string): string {
  return `Execution ${JSON.stringify(executionId)} is retained by the executor daemon ${JSON.stringify(owner)}, not by this one (${JSON.stringify(self)}): send its invokeHandle and closeHandles to the daemon that ran it, for instance by routing on the affinity header connect() sends`;
}

export const ALIVE = 'alive';
export const READY = 'ready: taking new sessions';
export const NOT_READY_DRAINING = 'not ready: draining, no new sessions';
export const NOT_READY_STARTING = 'not ready: the first sandbox has not started yet';

export function formatSandboxUnavailable(detail: string): string {
  return `not ready: the executor cannot start a sandbox: ${detail}`;
}

export const ADMIN_NOT_FOUND = 'The admin listener serves GET /healthz, /readyz and /metrics';

export function formatAdminListening(url: string): string {
  return `admin listening on ${url} (/healthz, /readyz, /metrics)`;
}

export function formatDrainTimedOut(running: number, timeout: number): string {
  return `the drain timeout of ${timeout} ms passed (--drain-timeout-ms) with ${running} execution${running === 1 ? '' : 's'} still running: cancelling ${running === 1 ? 'it' : 'them'}`;
}

/** What the client of a call the drain timeout cancelled is told: the daemon's doing, not its own signal. */
export function formatDrainCancelledCall(kind: ExecutionKind, timeout: number): string {
  return `The daemon stopped, and this ${kind} call's run was cancelled after the daemon's drain timeout of ${timeout} ms passed (--drain-timeout-ms).`;
}

export function formatParentGone(parent: number): string {
  return `the parent process (pid ${parent}) is gone: shutting down as on SIGTERM (--detached keeps serving)`;
}

/** `closest`: the known flag the unknown one most likely meant, when one is near enough. */
export function formatUnknownFlag(flag: string, closest?: string): string {
  return closest === undefined ? `unknown flag ${flag}` : `unknown flag ${flag} (did you mean ${closest}?)`;
}

/** A listener's port another process holds: which flag (and option) moves it. */
export function formatPortInUse(host: string, port: number, flag: string, option: string): string {
  return `${host}:${port} is already in use (EADDRINUSE): another daemon or program listens there; choose another port with ${flag} (${option}), or ${flag} 0 for a free one`;
}

/** A usage error, as the CLI prints it: one line, which points to --help rather than printing it. */
export function formatUsageErrorLine(message: string): string {
  return `codemode-executor: ${message}; codemode-executor --help lists the flags\n`;
}

/** `codemode-executor --version`: the package's version, and the wire protocol's a client must match. */
export function formatVersion(version: string, protocolVersion: number): string {
  return `codemode-executor ${version} (protocol ${protocolVersion})\n`;
}

export function formatFlagNeedsValue(flag: string): string {
  return `${flag} needs a value`;
}

export function formatFlagNotInteger(flag: string, min: number, got: string): string {
  return `--${flag} must be ${optionRuleText.integerAtLeast(min)}, got ${JSON.stringify(got)}`;
}

/** An integer outside what the flag takes; `max` undefined: no upper bound. */
export function formatFlagOutOfRange(flag: string, min: number, max: number | undefined, got: number): string {
  const takes = max === undefined ? optionRuleText.atLeast(min) : optionRuleText.range(min, max);
  return `--${flag} must be ${takes}, got ${got}`;
}

export function formatLogFormatInvalid(got: string): string {
  return `--log-format must be text or json, got ${JSON.stringify(got)}`;
}

export function formatMissingCommand(usageLine: string): string {
  return `missing command: ${usageLine}`;
}

export function formatUnknownCommand(command: string): string {
  return `unknown command: ${command}; the commands are serve and bundle`;
}

export const TOKEN_EMPTY = '--token must not be empty';

export const ADMIN_HOST_WITHOUT_PORT = '--admin-host needs --admin-port: the admin listener is off without a port';

export function formatMinWorkersAboveMax(minWorkers: number, maxWorkers: number, maxWorkersGiven: boolean): string {
  const bound = maxWorkersGiven ? '--max-workers' : 'the default --max-workers on this host';
  return optionRuleText.minAboveMax('--min-workers', minWorkers, bound, maxWorkers);
}

export function formatCgroupNotAbsolute(got: string): string {
  return `--cgroup must be ${optionRuleText.cgroupPath}, got ${JSON.stringify(got)}`;
}

export function formatConfinementInvalid(got: string, valid: readonly string[]): string {
  return `--confinement must be ${optionRuleText.oneOf(valid)}, got ${JSON.stringify(got)}`;
}

export function formatTimeoutAboveMaxTimeout(timeout: number, maxTimeout: number, timeoutGiven: boolean): string {
  const what = timeoutGiven ? '--timeout' : 'the default --timeout';
  return `${optionRuleText.timeoutAboveMax(what, timeout, '--max-timeout', maxTimeout)}: a request's default bound cannot pass the largest one`;
}

export const NOT_AN_RPC_MESSAGE =
  'the client sent a message that is not a capnweb message (a JSON array led by its kind)';

export function formatRpcMessageRefused(kind: string): string {
  return `the client sent a capnweb "${kind}" message, which opens a stream; the executor protocol passes no streams`;
}

export type RpcTable = 'export' | 'import';

const RPC_TABLE_FLAGS: Record<RpcTable, string> = { export: '--max-rpc-exports', import: '--max-rpc-imports' };

export function formatRpcTableFull(table: RpcTable, entries: number, limit: number): string {
  return `the session's capnweb ${table} table holds ${entries} entries, past the limit of ${limit} (${RPC_TABLE_FLAGS[table]})`;
}

export function formatTooManyRetainedForTenant(limit: number): string {
  return `This connection's token already holds ${limit} retained execution${limit === 1 ? '' : 's'} across its connections, open and gone, the executor daemon's per-tenant limit (--max-retained-per-tenant, maxRetainedPerTenant): close one with closeHandles first, or wait for the idle ones to close (--retained-idle-timeout-ms)`;
}

export function formatTooManyRetained(limit: number): string {
  return `This connection already holds ${limit} retained execution${limit === 1 ? '' : 's'}, the executor daemon's per-connection limit (--max-retained-per-connection): close one with closeHandles first`;
}

/** The daemon's idle bound on retained executions, as its texts and the executor's name it. */
export const RETAINED_IDLE_FLAG = '--retained-idle-timeout-ms';

export function formatRetainedIdleClosed(executionId: string, timeout: number): string {
  return `retained execution ${executionId} closed: unused for ${timeout} ms (${RETAINED_IDLE_FLAG})`;
}

export function formatResultTooDeep(limit: number): string {
  return `The execution's result is nested deeper than the ${limit} levels the executor connection carries`;
}

export const PROXY_SIGNATURE_MISSING =
  'the connection did not open with a PROXY protocol v2 header, which this daemon requires (--proxy-protocol)';

export const PROXY_HEADER_CLOSED =
  'the connection closed before its PROXY protocol v2 header was whole (--proxy-protocol)';

export function formatProxyHeaderInvalid(reason: string): string {
  return `the connection's PROXY protocol v2 header is invalid: ${reason} (--proxy-protocol)`;
}

export function formatProxyHeaderTimedOut(timeout: number): string {
  return `no whole PROXY protocol v2 header within ${timeout} ms of connecting (--proxy-protocol, --handshake-timeout-ms)`;
}

export function formatTooManyAwaitingProxyHeader(waiting: number): string {
  return `${waiting} connections already wait for their PROXY protocol v2 header, the limit (--max-connections)`;
}

/** `missingModules` given something other than an array of hashes. */
export function formatModuleHashesInvalid(got: string, max: number): string {
  return `missingModules takes an array of at most ${max} module hashes (64 lower-case hex digits each); got ${got}`;
}

/** `putModules` given something other than hashes to module sources. */
export function formatModulePutsInvalid(got: string, max: number): string {
  return `putModules takes a record of at most ${max} module hashes (64 lower-case hex digits each) to module sources (source text, {js}, {cjs}, {text} or {json}); got ${got}`;
}
