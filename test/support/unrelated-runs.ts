/**
 * Forty unrelated executions sent while a tool call of the first is in flight, none of them from
 * it, as a host with many users sends them; the twentieth starts a nested run from its own tool
 * call (upstream's `codemode.run`). Shared by the in-process pool's test and the daemon's, so both
 * executors face the same load: on a small pool, unrelated runs must queue, never be refused as
 * nested runs past `pool.maxNestedRuns`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';
import type { Dispatch, ExecuteResult, Executor } from '../../src/protocol/types.js';

const UNRELATED_RUNS = 40;
const NESTING_RUN = 20;

/** What each run settles with, when every run completes. */
export const unrelatedRunsExpected: ExecuteResult[] = Array.from({ length: UNRELATED_RUNS }, (_, index) => ({
  result: index === NESTING_RUN ? { inner: 42 } : index,
  logs: [],
}));

/** Sends the forty runs to `executor` (each with `timeout`, where given) and resolves with their outcomes. */
export async function sendUnrelatedRuns(
  executor: Pick<Executor, 'execute'>,
  timeout?: number,
): Promise<ExecuteResult[]> {
  const providers = [{ name: 'codemode', tools: ['run', 'wait'] }];
  const bound = timeout === undefined ? {} : { timeout };
  let toolCalled = () => {};
  const firstToolCall = new Promise<void>((resolve) => {
    toolCalled = resolve;
  });
  const dispatch: Dispatch = createEnvelopeDispatch(
    {
      codemode: async (tool, [value]) => {
        // A tool that waits, as a program mostly does.
        toolCalled();
        if (tool === 'wait') return sleep(100, value);
        const outcome = await executor.execute({ code: value as string, providers, dispatch, ...bound });
        if (outcome.error !== undefined) throw new Error(outcome.error);
        return outcome.result;
      },
    },
    { active: true },
  );
  const run = (index: number) => {
    const body =
      index === NESTING_RUN
        ? 'const inner = await codemode.run("async () => codemode.wait(6 * 7)"); return { inner }'
        : `await codemode.wait(${index}); return codemode.wait(${index})`;
    return executor.execute({ code: `async () => { ${body} }`, providers, dispatch, ...bound });
  };
  const first = run(0);
  await firstToolCall;
  return Promise.all([first, ...Array.from({ length: UNRELATED_RUNS - 1 }, (_, index) => run(index + 1))]);
}
