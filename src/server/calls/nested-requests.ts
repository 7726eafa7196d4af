/**
 * Nested requests at the daemon. A client names, in `parent`, the call of its own from inside whose
 * tool call it sent a request (upstream's runtime starts `codemode.run` from inside a tool).
 * IsolateExecutor knows a nested run by the async context of the tool call it dispatched
 * (src/isolate/host/executor/nesting.ts), which a request arriving on the socket does not carry. So every tool
 * call this connection forwards keeps a snapshot of its async context, under its call's `callId`,
 * while it is in flight, and a request naming that call as `parent` runs inside the latest one. A
 * `parent` that names no call of this connection with a tool call in flight is ignored: the request
 * queues as any other, and a connection can lend only its own tool calls' context.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Dispatch } from '../../protocol/types.js';

type Snapshot = ReturnType<typeof AsyncLocalStorage.snapshot>;

export class ToolCallContexts {
  /** The async context of each tool call in flight, per call id, the latest last. */
  readonly #inFlight = new Map<string, Set<Snapshot>>();

  /** The request with its dispatch tracked under `callId` while each tool call is in flight. */
  track<T extends { dispatch?: Dispatch | null | undefined }>(callId: string | undefined, request: T): T {
    const dispatch = request.dispatch;
    if (callId === undefined || typeof dispatch !== 'function') return request;
    const tracked: Dispatch = async (provider, tool, args) => {
      const context = AsyncLocalStorage.snapshot();
      const contexts = this.#inFlight.get(callId) ?? new Set<Snapshot>();
      this.#inFlight.set(callId, contexts.add(context));
      try {
        return await dispatch(provider, tool, args);
      } finally {
        contexts.delete(context);
        if (contexts.size === 0 && this.#inFlight.get(callId) === contexts) this.#inFlight.delete(callId);
      }
    };
    return { ...request, dispatch: tracked };
  }

  /** Calls `call` inside the latest context of a tool call in flight of the `parent` call, if it has one. */
  run<T>(parent: string | undefined, call: () => T): T {
    let latest: Snapshot | undefined;
    const contexts = parent === undefined ? undefined : this.#inFlight.get(parent);
    if (contexts !== undefined) for (const context of contexts) latest = context;
    return latest === undefined ? call() : latest(call);
  }
}
