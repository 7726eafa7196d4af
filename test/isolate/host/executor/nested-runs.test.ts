/**
 * Nested runs on the real workerd: a tool of a running execution that itself calls `execute()`,
 * as upstream's runtime does for `codemode.run(snippet)`. On a pool of one, the nested run must
 * not wait on the process its parent holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../../../src/protocol/dispatch.js';
import type { Dispatch } from '../../../../src/protocol/types.js';
import { sendUnrelatedRuns, unrelatedRunsExpected } from '../../../support/unrelated-runs.js';

let executor: IsolateExecutor | undefined;

afterEach(async () => {
  await executor?.dispose();
  executor = undefined;
});

/** A dispatch whose `codemode.run(code)` runs `code` on the same executor, with this same dispatch. */
function runningDispatch(owner: () => IsolateExecutor): Dispatch {
  const dispatch: Dispatch = createEnvelopeDispatch(
    {
      codemode: async (_tool, [code]) => {
        const outcome = await owner().execute({
          code: code as string,
          providers: [{ name: 'codemode', tools: ['run'] }],
          dispatch,
        });
        if (outcome.error !== undefined) throw new Error(outcome.error);
        return outcome.result;
      },
    },
    { active: true },
  );
  return dispatch;
}

describe('a run started from a tool call of a running execution', () => {
  it('completes on a pool of maxWorkers 1', async () => {
    executor = new IsolateExecutor({ timeout: 20_000, pool: { maxWorkers: 1, spare: 0 } });
    const outcome = await executor.execute({
      code: 'async () => { const inner = await codemode.run("async () => 6 * 7"); return { inner } }',
      providers: [{ name: 'codemode', tools: ['run'] }],
      dispatch: runningDispatch(() => executor!),
    });
    expect(outcome).toEqual({ result: { inner: 42 }, logs: [] });
  });

  it('nests as deep as pool.maxNestedRuns, and one level more is refused with a text naming it', async () => {
    executor = new IsolateExecutor({ timeout: 20_000, pool: { maxWorkers: 1, spare: 0, maxNestedRuns: 2 } });
    const dispatch = runningDispatch(() => executor!);
    const providers = [{ name: 'codemode', tools: ['run'] }];
    // Three levels below the parent: the first two are admitted beyond maxWorkers, the third is not.
    const level3 = JSON.stringify('async () => "deepest"');
    const level2 = JSON.stringify(`async () => codemode.run(${level3})`);
    const level1 = `async () => codemode.run(${level2})`;
    const refused = await executor.execute({
      code: `async () => { try { return await codemode.run(${JSON.stringify(level1)}) } catch (error) { return error.message } }`,
      providers,
      dispatch,
    });
    expect(refused.result).toContain(isolateText.nestedLimit(2));
    const admitted = await executor.execute({
      code: `async () => codemode.run(${level2})`,
      providers,
      dispatch,
    });
    expect(admitted).toEqual({ result: 'deepest', logs: [] });
  });

  it('is told from forty unrelated runs sent meanwhile on maxWorkers 2: they queue, none is refused', async () => {
    executor = new IsolateExecutor({ timeout: 20_000, pool: { maxWorkers: 2, spare: 0 } });
    // The executor's timeout (20 s) bounds each run, so the requests name none.
    const outcomes = await sendUnrelatedRuns(executor);
    expect(outcomes).toEqual(unrelatedRunsExpected);
  }, 180_000);
});
