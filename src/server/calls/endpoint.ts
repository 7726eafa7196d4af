/**
 * The daemon's main RPC target, one per connection. Prototype methods are what a client may call;
 * state lives in private fields, which capnweb never exposes. Every argument is checked against
 * the wire grammar (wire-checks.ts) before use.
 */
import { RpcTarget } from 'capnweb';
import { DEFAULT_MAX_QUEUED_EVENTS } from '../../events/options.js';
import type { IsolateCallOptions } from '../../isolate/index.js';
import type { CompletionGuard } from '../../protocol/dispatch.js';
import { ExecutorError } from '../../protocol/errors.js';
import type { ExecutorEndpoint, WireEventTerms, WireExecuteResult } from '../../wire/types.js';
import { putModules, resolveModuleRefs } from '../modules/module-endpoint.js';
import { fromWireExecutionId, toWireExecutionId } from '../retained/handle-ids.js';
import type { FetchStub } from '../retained/retained-leases.js';
import { formatRefusedMessage, formatTooManyRetained, formatTooManyRetainedForTenant } from '../texts.js';
import { oversizedMessageError } from '../transport/oversize.js';
import type { Connection } from './connection.js';
import { WireEventStream } from './event-stream.js';
import { ToolCallContexts } from './nested-requests.js';
import { heldBytesOf } from './request-bytes.js';
import { executeRequestFromWire, invokeRequestFromWire } from './request-from-wire.js';
import {
  checkExecutionId,
  checkInvokeHandleRequest,
  checkModuleHashes,
  checkModulePuts,
  checkOversizeArguments,
  checkWireExecuteRequest,
} from './wire-checks.js';

export class ConnectionEndpoint extends RpcTarget implements ExecutorEndpoint {
  readonly #connection: Connection;
  /** This connection's tool calls in flight, per call, whose context a nested request runs in. */
  readonly #toolCalls = new ToolCallContexts();

  constructor(connection: Connection) {
    super();
    this.#connection = connection;
  }

  protocolVersion(): number {
    return this.#connection.server.protocolVersion;
  }

  heartbeat(): boolean {
    return true;
  }

  async execute(request: unknown): Promise<WireExecuteResult> {
    const connection = this.#connection;
    const { server, id } = connection;
    const checked = this.#checked('execute', () => checkWireExecuteRequest(request));
    // Modules named by hash are held by the tenant's cache, which bounds them: they count once, there, not per request.
    const heldBytes = heldBytesOf([checked.code, checked.modules, checked.moduleRefs, checked.providers]);
    const wire = this.#checked('execute', () => resolveModuleRefs(server.modules, connection.tenant.retained, checked));
    // A place among the connection's retained executions is taken before the run, so concurrent runs cannot pass the cap.
    const releasePlace = wire.retainHandles === true ? this.#reserveRetained() : undefined;
    let placeTaken = false;
    const terms = { ...callTerms(wire), heldBytes };
    const run = connection.run('execute', terms, async (signal) => {
      const guard: CompletionGuard = { active: true };
      const stream = eventStreamOf(wire, wire.outboundMode === 'default');
      const retain = wire.retainHandles === true && wire.outboundMode === 'stub' && typeof wire.outbound === 'function';
      // A retained execution may fetch again later, so it keeps a duplicate of the stub capnweb disposes at return.
      const kept = retain ? (wire.outbound as FetchStub).dup() : undefined;
      const keptGuard: CompletionGuard = { active: true };
      try {
        const native = this.#toolCalls.track(
          wire.callId,
          executeRequestFromWire(wire, guard, kept ? { stub: kept, guard: keptGuard } : undefined),
        );
        const outcome = await this.#toolCalls.run(wire.parent, () =>
          server.executor.execute(
            { ...native, tenant: connection.tenant.retained },
            streamed(
              { signal, share: server.tenancy.frame(connection.tenant.share), retainedIdle: server.retainedIdle },
              stream,
              wire.traceparent,
            ),
          ),
        );
        if (outcome.executionId !== undefined) {
          const owner = connection.ended ? undefined : id;
          server.retained.keep(
            outcome.executionId,
            owner,
            connection.tenant.retained,
            kept ? { stub: kept, guard: keptGuard } : undefined,
          );
          placeTaken = true;
        } else kept?.[Symbol.dispose]();
        return outcome;
      } catch (error) {
        kept?.[Symbol.dispose]();
        throw error;
      } finally {
        guard.active = false;
        stream?.close();
      }
    });
    const result = await run.finally(() => {
      if (!placeTaken) releasePlace?.();
    });
    if (result.executionId !== undefined) result.executionId = toWireExecutionId(result.executionId, server.daemonId);
    return result;
  }

  async invokeHandle(request: unknown): Promise<WireExecuteResult> {
    const connection = this.#connection;
    const { executor, daemonId } = connection.server;
    const { wire, args } = this.#checked('invokeHandle', () => checkInvokeHandleRequest(request));
    const executionId = this.#checked('invokeHandle', () => fromWireExecutionId(wire.executionId, daemonId));
    const terms = { ...callTerms(wire), heldBytes: heldBytesOf([wire.executionId, wire.handle, wire.args]) };
    const result = await connection.run('invokeHandle', terms, async (signal) => {
      const guard: CompletionGuard = { active: true };
      const done = connection.server.retained.using(executionId);
      const stream = eventStreamOf(wire, false);
      try {
        const native = this.#toolCalls.track(wire.callId, invokeRequestFromWire({ ...wire, executionId }, args, guard));
        return await this.#toolCalls.run(wire.parent, () =>
          executor.invokeHandle(
            native,
            streamed(
              { signal, share: connection.server.tenancy.frame(connection.tenant.share) },
              stream,
              wire.traceparent,
            ),
          ),
        );
      } finally {
        guard.active = false;
        stream?.close();
        done();
      }
    });
    if (result.executionId !== undefined) result.executionId = toWireExecutionId(result.executionId, daemonId);
    return result;
  }

  async closeHandles(wireId: unknown): Promise<void> {
    const { server } = this.#connection;
    const executionId = this.#checked('other', () => fromWireExecutionId(checkExecutionId(wireId), server.daemonId));
    await server.executor.closeHandles(executionId);
    server.retained.close(executionId);
  }

  /** Of these module hashes, the ones the daemon does not hold for this connection's tenant. */
  missingModules(hashes: unknown): string[] {
    const checked = this.#checked('other', () => checkModuleHashes(hashes));
    return this.#connection.server.modules.missing(this.#connection.tenant.retained, checked);
  }

  /** Keeps modules for this connection's tenant, each checked against the hash it is put under. */
  async putModules(modules: unknown): Promise<void> {
    const checked = this.#checked('other', () => checkModulePuts(modules));
    const { server, tenant } = this.#connection;
    try {
      await putModules(server.modules, tenant.retained, checked);
    } catch (error) {
      this.#refuseMessage(error as ExecutorError);
      throw error;
    }
  }

  /** The client aborted the signal of a call it sent with this token: fire-and-forget, so nothing to answer. */
  cancel(cancelToken: unknown): void {
    this.#connection.cancel(cancelToken);
  }

  /**
   * Called in place of a call whose message passed the size bound (oversize.ts). A client may call
   * it too, so its arguments are checked like any other.
   */
  rejectOversizedMessage(size: unknown, limit: unknown): never {
    const [checkedSize, checkedLimit] = this.#checked('other', () => checkOversizeArguments(size, limit));
    const error = oversizedMessageError(checkedSize, checkedLimit);
    this.#refuseMessage(error);
    throw error;
  }

  /** capnweb calls this when the session ends, whoever ended it. */
  [Symbol.dispose](): void {
    this.#connection.end();
  }

  /** Takes a place among the connection's retained executions, or refuses the execute naming the cap. */
  #reserveRetained(): () => void {
    const { server, id, tenant } = this.#connection;
    const place = server.retained.reserve(id, tenant.retained);
    if (typeof place === 'function') return place;
    const { maxRetainedPerConnection, maxRetainedPerTenant } = server.retained.limits;
    const text =
      place === 'connection'
        ? formatTooManyRetained(maxRetainedPerConnection)
        : formatTooManyRetainedForTenant(maxRetainedPerTenant);
    throw this.#connection.refuse('execute', new ExecutorError('LIMIT_EXCEEDED', text));
  }

  /** A refused message that is no execution, logged through the same bounded window as refused calls. */
  #refuseMessage(error: ExecutorError): void {
    const { id, server } = this.#connection;
    server.refusals.refused(`connection ${id} ${error.code}`, formatRefusedMessage(id, error.message));
  }

  /** Runs a check; its failure is a refusal, logged and counted, before anything runs. */
  #checked<T>(kind: 'execute' | 'invokeHandle' | 'other', check: () => T): T {
    try {
      return check();
    } catch (error) {
      if (kind === 'other') {
        this.#refuseMessage(error as ExecutorError);
        throw error;
      }
      throw this.#connection.refuse(kind, error as ExecutorError);
    }
  }
}

/** What `Connection.run` reads of a call before running it. */
function callTerms(wire: {
  cancelToken?: string | undefined;
  heartbeatLease?: number | undefined;
  traceparent?: string | undefined;
}) {
  // The trace id is the traceparent's second field: the daemon's log line of the call carries it.
  const traceId = wire.traceparent?.split('-')[1];
  return { cancelToken: wire.cancelToken, heartbeatLease: wire.heartbeatLease, traceId };
}

/** The call's event stream to its client, when the client watches its events. */
function eventStreamOf(wire: WireEventTerms, fetches: boolean): WireEventStream | undefined {
  if (typeof wire.events !== 'function') return undefined;
  return new WireEventStream(wire.events, wire.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS, fetches);
}

/**
 * The executor's call options, with the stream as its `onEvent` when there is one, and the
 * client's span as the parent of the run's spans when the client traces the call.
 */
function streamed(
  options: IsolateCallOptions,
  stream: WireEventStream | undefined,
  traceparent: string | undefined,
): IsolateCallOptions {
  const withStream = stream === undefined ? options : { ...options, onEvent: stream.take };
  return traceparent === undefined ? withStream : { ...withStream, traceparent };
}
