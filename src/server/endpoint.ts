/**
 * The daemon's main RPC target, one per connection. Prototype methods are what a client may call;
 * state lives in private fields, which capnweb never exposes.
 */
import { RpcTarget } from 'capnweb';
import type { CompletionGuard } from '../protocol/dispatch.js';
import type {
  ExecutorEndpoint as EndpointContract,
  WireExecuteRequest,
  WireExecuteResult,
  WireInvokeHandleRequest,
} from '../wire/types.js';
import type { Connection } from './connection.js';
import { oversizedMessageError } from './oversize.js';
import { executeRequestFromWire, invokeRequestFromWire } from './request-from-wire.js';
import type { FetchStub } from './retained-outbounds.js';
import { formatRefusedMessage } from './texts.js';

export class ExecutorEndpoint extends RpcTarget implements EndpointContract {
  readonly #connection: Connection;

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

  execute(wire: WireExecuteRequest): Promise<WireExecuteResult> {
    const { server, id } = this.#connection;
    return this.#connection.run('execute', wire?.cancelToken, async (signal) => {
      const guard: CompletionGuard = { active: true };
      const retain = wire.retainHandles === true && wire.outboundMode === 'stub' && typeof wire.outbound === 'function';
      // A retained execution may fetch again later, so it keeps a duplicate of the stub capnweb disposes at return.
      const kept = retain ? (wire.outbound as FetchStub).dup() : undefined;
      const keptGuard: CompletionGuard = { active: true };
      try {
        const request = executeRequestFromWire(wire, guard, kept ? { stub: kept, guard: keptGuard } : undefined);
        const result = await server.executor.execute(request, { signal });
        if (kept && result.executionId !== undefined) server.retained.keep(result.executionId, id, kept, keptGuard);
        else kept?.[Symbol.dispose]();
        return result;
      } catch (error) {
        kept?.[Symbol.dispose]();
        throw error;
      } finally {
        guard.active = false;
      }
    });
  }

  invokeHandle(wire: WireInvokeHandleRequest): Promise<WireExecuteResult> {
    const { executor } = this.#connection.server;
    return this.#connection.run('invokeHandle', wire?.cancelToken, async (signal) => {
      const guard: CompletionGuard = { active: true };
      try {
        return await executor.invokeHandle(invokeRequestFromWire(wire, guard), { signal });
      } finally {
        guard.active = false;
      }
    });
  }

  async closeHandles(executionId: string): Promise<void> {
    const { server } = this.#connection;
    await server.executor.closeHandles(executionId);
    server.retained.release(executionId);
  }

  /** The client aborted the signal of a call it sent with this token: fire-and-forget, so nothing to answer. */
  cancel(cancelToken: string): void {
    this.#connection.cancel(cancelToken);
  }

  /** Called in place of a call whose message passed the size bound (oversize.ts). */
  rejectOversizedMessage(size: number, limit: number): never {
    const error = oversizedMessageError(size, limit);
    this.#connection.server.log(formatRefusedMessage(this.#connection.id, error.message));
    throw error;
  }

  /** capnweb calls this when the session ends, whoever ended it. */
  [Symbol.dispose](): void {
    this.#connection.end();
  }
}
