/** Every text the daemon composes: log lines, refusals and the errors its bounds raise. */
import { describeValue } from '../protocol/describe-value.js';

export function formatListening(url: string): string {
  return `listening on ${url}`;
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

export const TOKEN_REFUSED = 'missing or wrong bearer token';
export const DRAINING_REFUSED = 'the daemon is shutting down';

export type ExecutionKind = 'execute' | 'invokeHandle';

export function formatExecutionSettled(
  connection: number,
  execution: number,
  kind: ExecutionKind,
  outcome: string,
  milliseconds: number,
): string {
  return `connection ${connection} ${kind} ${execution} ${outcome} in ${milliseconds} ms`;
}

export function formatExecutionCancelled(connection: number, execution: number, kind: ExecutionKind): string {
  return `connection ${connection} ${kind} ${execution} cancelled: the client is gone`;
}

export function formatInvalidCancelToken(token: unknown): string {
  return `cancelToken must be a non-empty string, got ${describeValue(token)}`;
}

export function formatDuplicateCancelToken(token: string): string {
  return `cancelToken ${JSON.stringify(token)} already names a running call on this connection; a token names one call at a time`;
}

export function formatMessageTooLarge(size: number, limit: number): string {
  return `A message of ${size} bytes exceeds the executor daemon's limit of ${limit} bytes (--max-message-size)`;
}

export function formatTooManyExecutions(limit: number): string {
  return `This connection already runs ${limit} execution${limit === 1 ? '' : 's'}, the executor daemon's per-connection limit (--max-executions-per-connection)`;
}

export const SHUTTING_DOWN = 'The executor daemon is shutting down and accepts no new executions';

export function formatUnsafeBind(host: string): string {
  return `Refusing to bind ${host} without a token: a non-loopback address needs --token or the CODEMODE_EXECUTOR_TOKEN environment variable`;
}

export function formatDraining(running: number): string {
  return `shutting down: draining ${running} running execution${running === 1 ? '' : 's'}`;
}

export const STOPPED = 'stopped';

export function formatInvalidServerOption(name: string, expected: string, value: unknown): string {
  return `createExecutorServer(): options.${name} must be ${expected}, got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`;
}

export const UPGRADE_REQUIRED = 'This is a codemode executor daemon: connect with a WebSocket (see docs/remote.md)';

export const BINARY_MESSAGE = 'Received a binary WebSocket message; the executor protocol speaks text';

export function formatInvalidOutboundMode(mode: unknown): string {
  return `outboundMode must be "default", "blocked" or "stub", got ${JSON.stringify(mode) ?? String(mode)}`;
}

export const OUTBOUND_STUB_MISSING = 'outboundMode "stub" needs an outbound function on the request';

export function formatRefusedMessage(connection: number, reason: string): string {
  return `connection ${connection} refused a message: ${reason}`;
}

/** The close reason every client socket gets when the daemon stops. */
export const SOCKET_CLOSED_ON_STOP = 'executor daemon stopped';
