/**
 * The daemon's half of the wire mapping: a checked wire request (wire-checks.ts) becomes the native request the
 * executor runs. Only fields present on the wire are set, the outbound mode becomes the native
 * tri-state, and the caller's stubs are held to the call's completion guard, so that a call after
 * the execution settled gets the completion text instead of capnweb's disposed-stub error.
 */
import { type CompletionGuard, guardDispatch } from '../../protocol/dispatch.js';
import { COMPLETED_MESSAGE } from '../../protocol/texts.js';
import type { Dispatch, ExecuteRequest, InvokeHandleRequest, OutboundFetch } from '../../protocol/types.js';
import { requestToWire, responseFromWire } from '../../wire/fetch-shape.js';
import type { WireExecuteRequest, WireFetch, WireInvokeHandleRequest } from '../../wire/types.js';

function guarded(dispatch: Dispatch | null, guard: CompletionGuard): Dispatch | null {
  return typeof dispatch === 'function' ? guardDispatch(dispatch, guard) : dispatch;
}

/** Wraps the caller's outbound stub into a native `OutboundFetch` over plain-data requests and responses. */
function outboundFromStub(stub: WireFetch, guard: CompletionGuard): OutboundFetch {
  return async (request) => {
    if (!guard.active) throw new Error(COMPLETED_MESSAGE);
    return responseFromWire(await stub(await requestToWire(request)));
  };
}

/**
 * `outbound` overrides the stub and guard of the caller's outbound function: a retained execution
 * keeps a duplicate of the stub alive past the call.
 */
export function executeRequestFromWire(
  wire: WireExecuteRequest,
  guard: CompletionGuard,
  outbound: { stub: WireFetch | undefined; guard: CompletionGuard } = { stub: wire.outbound, guard },
): ExecuteRequest {
  const request: ExecuteRequest = { code: wire.code, dispatch: guarded(wire.dispatch, guard) };
  if (wire.providers !== undefined) request.providers = wire.providers;
  if (wire.modules !== undefined) request.modules = wire.modules;
  if (wire.timeout !== undefined) request.timeout = wire.timeout;
  if (wire.cpuTimeout !== undefined) request.cpuTimeout = wire.cpuTimeout;
  if (wire.countHostWaits !== undefined) request.countHostWaits = wire.countHostWaits;
  if (wire.retainHandles !== undefined) request.retainHandles = wire.retainHandles;
  if (wire.outboundMode === 'blocked') request.outbound = null;
  if (wire.outboundMode === 'stub' && outbound.stub) request.outbound = outboundFromStub(outbound.stub, outbound.guard);
  return request;
}

/** `args` is the decoded argument array (the wire carries it encoded). */
export function invokeRequestFromWire(
  wire: WireInvokeHandleRequest,
  args: unknown[] | undefined,
  guard: CompletionGuard,
): InvokeHandleRequest {
  const request: InvokeHandleRequest = {
    executionId: wire.executionId,
    handle: wire.handle,
    dispatch: guarded(wire.dispatch, guard),
  };
  if (args !== undefined) request.args = args;
  if (wire.timeout !== undefined) request.timeout = wire.timeout;
  if (wire.cpuTimeout !== undefined) request.cpuTimeout = wire.cpuTimeout;
  if (wire.countHostWaits !== undefined) request.countHostWaits = wire.countHostWaits;
  return request;
}
