/**
 * The client's half of the wire mapping: a native request becomes a wire object that carries only
 * the fields the caller set (a request field wins over the connection-time default), the outbound
 * tri-state as an explicit mode, and functions that convert `Request`/`Response` to plain data.
 */
import { ExecutorError } from '../protocol/errors.js';
import type { ExecuteRequest, InvokeHandleRequest, OutboundFetch } from '../protocol/types.js';
import { encodeValue } from '../protocol/value-codec.js';
import { requestFromWire, responseToWire } from '../wire/fetch-shape.js';
import type {
  OutboundMode,
  WireEventSink,
  WireEventTerms,
  WireExecuteRequest,
  WireFetch,
  WireInvokeHandleRequest,
} from '../wire/types.js';
import type { ResolvedConnectOptions } from './connect-options.js';
import { formatInvalidOutbound } from './texts.js';

type Defaults = ResolvedConnectOptions['defaults'];

function pick<T>(requested: T | undefined, fallback: T | undefined): T | undefined {
  return requested !== undefined ? requested : fallback;
}

/** What a call carries beside its request: a cancel token when the caller passed a signal, and the client's heartbeat lease. */
export interface CallTerms {
  cancelToken?: string | undefined;
  heartbeatLease?: number | undefined;
  /** This client's id for the call. */
  callId?: string | undefined;
  /** The id of this client's call from whose tool call this one was sent (a nested run), where known. */
  parent?: string | undefined;
  /** The sink of the events that happen in the daemon, when the caller watches its events. */
  events?: WireEventSink | undefined;
  maxQueuedEvents?: number | undefined;
  /** The client's span for the call, when it is traced. */
  traceparent?: string | undefined;
}

function addTerms(
  wire: { cancelToken?: string; heartbeatLease?: number; callId?: string; parent?: string } & WireEventTerms,
  terms: CallTerms,
): void {
  if (terms.events !== undefined) wire.events = terms.events;
  if (terms.maxQueuedEvents !== undefined) wire.maxQueuedEvents = terms.maxQueuedEvents;
  if (terms.traceparent !== undefined) wire.traceparent = terms.traceparent;
  if (terms.cancelToken !== undefined) wire.cancelToken = terms.cancelToken;
  if (terms.callId !== undefined) wire.callId = terms.callId;
  if (terms.parent !== undefined) wire.parent = terms.parent;
  if (terms.heartbeatLease !== undefined) wire.heartbeatLease = terms.heartbeatLease;
}

/** Each term goes on the wire only when set. */
export function executeRequestToWire(
  request: ExecuteRequest,
  defaults: Defaults,
  terms: CallTerms = {},
): WireExecuteRequest {
  const wire: WireExecuteRequest = {
    code: request.code,
    dispatch: request.dispatch ?? null,
    ...outboundToWire(pick(request.outbound, defaults.outbound)),
  };
  const timeout = pick(request.timeout, defaults.timeout);
  const countHostWaits = pick(request.countHostWaits, defaults.countHostWaits);
  if (request.providers !== undefined) wire.providers = request.providers;
  if (request.modules !== undefined) wire.modules = request.modules;
  if (timeout !== undefined) wire.timeout = timeout;
  if (request.cpuTimeout !== undefined) wire.cpuTimeout = request.cpuTimeout;
  if (countHostWaits !== undefined) wire.countHostWaits = countHostWaits;
  // retainHandles rides the request alone: retention is a per-run decision.
  if (request.retainHandles !== undefined) wire.retainHandles = request.retainHandles;
  addTerms(wire, terms);
  return wire;
}

export function invokeRequestToWire(
  request: InvokeHandleRequest,
  defaults: Defaults,
  terms: CallTerms = {},
): WireInvokeHandleRequest {
  const wire: WireInvokeHandleRequest = {
    executionId: request.executionId,
    handle: request.handle,
    dispatch: request.dispatch ?? null,
  };
  const timeout = pick(request.timeout, defaults.timeout);
  const countHostWaits = pick(request.countHostWaits, defaults.countHostWaits);
  if (request.args !== undefined) wire.args = encodeValue(request.args);
  if (timeout !== undefined) wire.timeout = timeout;
  if (request.cpuTimeout !== undefined) wire.cpuTimeout = request.cpuTimeout;
  if (countHostWaits !== undefined) wire.countHostWaits = countHostWaits;
  addTerms(wire, terms);
  return wire;
}

function outboundToWire(outbound: OutboundFetch | null | undefined): {
  outboundMode: OutboundMode;
  outbound?: WireFetch;
} {
  if (outbound === undefined) return { outboundMode: 'default' };
  if (outbound === null) return { outboundMode: 'blocked' };
  if (typeof outbound !== 'function') throw new ExecutorError('INVALID_REQUEST', formatInvalidOutbound(outbound));
  return {
    outboundMode: 'stub',
    outbound: async (request) => responseToWire(await outbound(requestFromWire(request))),
  };
}
