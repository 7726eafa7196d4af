/**
 * Which of this client's calls a request is sent from. Upstream's runtime starts `codemode.run`
 * from inside a tool call of a running execution; the daemon admits that nested run beyond its
 * pool only when the request names its parent call, and a request that names none queues as any
 * other. So a parent is named only where this client knows it (docs/remote.md, Nested runs).
 *
 * Where the runtime has async context (Node ≥ 20.16; Bun, Deno), `node:async_hooks` is looked up
 * at run time rather than imported, so this entry still bundles for a Worker without
 * nodejs_compat. Every tool dispatch then runs in a frame naming its call, and a request sent from
 * inside that frame names that call: precisely, whatever else runs at once. Without async context,
 * a request names a parent only when exactly one call of this client has a tool call in flight.
 */
import type { Dispatch } from '../protocol/types.js';

interface Frame {
  /** The client whose call made the tool call. */
  readonly owner: object;
  readonly callId: string;
  /** Whether that tool call is still waiting for its answer. */
  readonly inFlight: () => boolean;
}

/** The part of `AsyncLocalStorage` used here. */
export interface FrameStorage {
  run<R>(frame: Frame, call: () => R): R;
  getStore(): Frame | undefined;
}

interface RuntimeLookup {
  process?: { getBuiltinModule?: (id: string) => unknown };
}

/** An `AsyncLocalStorage` where the runtime has one, found without importing a Node built-in; `null` where not. */
export function runtimeFrameStorage(): FrameStorage | null {
  try {
    const hooks = (globalThis as RuntimeLookup).process?.getBuiltinModule?.('node:async_hooks') as
      | { AsyncLocalStorage?: new () => FrameStorage }
      | undefined;
    return hooks?.AsyncLocalStorage === undefined ? null : new hooks.AsyncLocalStorage();
  } catch {
    return null;
  }
}

const detectedStorage = runtimeFrameStorage();

export class ClientCalls {
  readonly #frames: FrameStorage | null;
  #lastId = 0;
  /** Tool calls in flight, per call that has any. */
  readonly #toolCallsInFlight = new Map<string, number>();

  constructor(frames: FrameStorage | null = detectedStorage) {
    this.#frames = frames;
  }

  /** A fresh id for a call of this client; the daemon keys it per connection, so a counter is unique enough. */
  nextId(): string {
    this.#lastId += 1;
    return String(this.#lastId);
  }

  /** The request with each tool call counted for `callId` while in flight, and run in a frame naming it. */
  track<T extends { dispatch?: Dispatch | null | undefined }>(callId: string, request: T): T {
    const dispatch = request?.dispatch;
    if (typeof dispatch !== 'function') return request;
    const tracked: Dispatch = async (provider, tool, args) => {
      let pending = true;
      this.#toolCallsInFlight.set(callId, (this.#toolCallsInFlight.get(callId) ?? 0) + 1);
      try {
        const frame: Frame = { owner: this, callId, inFlight: () => pending };
        const call = () => dispatch(provider, tool, args);
        return await (this.#frames === null ? call() : this.#frames.run(frame, call));
      } finally {
        pending = false;
        const left = (this.#toolCallsInFlight.get(callId) ?? 1) - 1;
        if (left === 0) this.#toolCallsInFlight.delete(callId);
        else this.#toolCallsInFlight.set(callId, left);
      }
    };
    return { ...request, dispatch: tracked };
  }

  /** The call a request sent now comes from, where that is known; `undefined` otherwise. */
  parent(): string | undefined {
    if (this.#frames !== null) {
      const frame = this.#frames.getStore();
      return frame !== undefined && frame.owner === this && frame.inFlight() ? frame.callId : undefined;
    }
    // No async context: only an unambiguous parent is named, so an unrelated call is rarely taken for a nested one.
    if (this.#toolCallsInFlight.size !== 1) return undefined;
    const [only] = this.#toolCallsInFlight.keys();
    return only;
  }
}
