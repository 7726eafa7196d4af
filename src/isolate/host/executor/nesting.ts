/**
 * Nested runs: an execution started from inside a tool call of a running execution of the same
 * executor (upstream's runtime does it for `codemode.run(snippet)`). The parent holds its process
 * while it waits on that tool, so on a full pool the nested run would wait on its own parent. The
 * executor calls every tool dispatch inside a frame of this module's AsyncLocalStorage; an
 * `execute()` made from that tool finds the frame and is admitted beyond `pool.maxWorkers`.
 *
 * A daemon, whose nested requests arrive on a socket rather than inside the tool's own async
 * context, captures the frame with `AsyncLocalStorage.snapshot()` in its dispatch and runs the
 * nested request inside that snapshot.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Dispatch } from '../../../protocol/types.js';

interface DispatchFrame {
  /** The executor whose run made the tool call. */
  readonly owner: object;
  /** Whether that tool call is still waiting for its answer. */
  readonly inFlight: () => boolean;
}

const dispatchScope = new AsyncLocalStorage<DispatchFrame>();

/** `dispatch`, each of whose calls runs inside a frame that names `owner`. */
export function dispatchWithinFrame(owner: object, dispatch: Dispatch): Dispatch {
  return async (provider, tool, args) => {
    let pending = true;
    const frame: DispatchFrame = { owner, inFlight: () => pending };
    try {
      return await dispatchScope.run(frame, () => dispatch(provider, tool, args));
    } finally {
      pending = false;
    }
  };
}

/** Whether the caller runs inside a tool call, still waiting for its answer, of a run of `owner`. */
export function isNestedIn(owner: object): boolean {
  const frame = dispatchScope.getStore();
  return frame !== undefined && frame.owner === owner && frame.inFlight();
}
