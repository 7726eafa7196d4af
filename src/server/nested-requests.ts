/**
 * Nested requests at the daemon. A client marks a request `nested` when it sent it while one of
 * its own tool calls was in flight (upstream's runtime starts `codemode.run` from inside a tool).
 * IsolateExecutor knows a nested run by the async context of the tool call it dispatched
 * (src/isolate/nesting.ts), which a request arriving on the socket does not carry. So every tool
 * call this connection forwards keeps a snapshot of its async context while it is in flight, and
 * a nested request runs inside the latest one. A connection can lend only its own tool calls'
 * context, and the executor bounds what nested runs may take (`pool.maxNestedRuns`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Dispatch } from '../protocol/types.js';

type Snapshot = ReturnType<typeof AsyncLocalStorage.snapshot>;

export class ToolCallContexts {
  /** The async context of each tool call in flight, the latest last. */
  readonly #inFlight = new Set<Snapshot>();

  /** The request with its dispatch tracked while each tool call is in flight. */
  track<T extends { dispatch?: Dispatch | null | undefined }>(request: T): T {
    const dispatch = request.dispatch;
    if (typeof dispatch !== 'function') return request;
    const tracked: Dispatch = async (provider, tool, args) => {
      const context = AsyncLocalStorage.snapshot();
      this.#inFlight.add(context);
      try {
        return await dispatch(provider, tool, args);
      } finally {
        this.#inFlight.delete(context);
      }
    };
    return { ...request, dispatch: tracked };
  }

  /** Calls `call` inside the latest tool call's context when the request is `nested` and one is in flight. */
  run<T>(nested: boolean | undefined, call: () => T): T {
    let latest: Snapshot | undefined;
    if (nested === true) for (const context of this.#inFlight) latest = context;
    return latest === undefined ? call() : latest(call);
  }
}
