/**
 * Outbound stubs kept past their call. capnweb disposes the stubs of a call when it returns, but a
 * retained execution's functions may fetch again through `invokeHandle`, so the daemon keeps a
 * duplicate (`dup()`) under the execution id until `closeHandles` or the owning connection ends.
 */

import type { CompletionGuard } from '../protocol/dispatch.js';
import type { WireFetch } from '../wire/types.js';

/** A capnweb stub: callable, duplicable, disposable. */
export type FetchStub = WireFetch & { dup(): FetchStub; [Symbol.dispose](): void };

interface Retained {
  stub: FetchStub;
  guard: CompletionGuard;
  connection: number;
}

export class RetainedOutbounds {
  readonly #byExecution = new Map<string, Retained>();

  keep(executionId: string, connection: number, stub: FetchStub, guard: CompletionGuard): void {
    this.release(executionId);
    this.#byExecution.set(executionId, { stub, guard, connection });
  }

  release(executionId: string): void {
    const retained = this.#byExecution.get(executionId);
    if (!retained) return;
    this.#byExecution.delete(executionId);
    dispose(retained);
  }

  releaseConnection(connection: number): void {
    for (const [executionId, retained] of this.#byExecution) {
      if (retained.connection !== connection) continue;
      this.#byExecution.delete(executionId);
      dispose(retained);
    }
  }
}

function dispose(retained: Retained): void {
  retained.guard.active = false;
  try {
    retained.stub[Symbol.dispose]();
  } catch {
    // The session is already gone, and the stub with it.
  }
}
