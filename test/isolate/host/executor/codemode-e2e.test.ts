/**
 * The composition a codemode host ships, end to end on the real workerd: the design's
 * three-call example ("Output normalization" in the adapter design), with its printed output, and
 * the CPU-time bound through the dialect.
 */
import { formatWithOptions } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { CodemodeExecutor } from '../../../../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { formatCpuTimeout } from '../../../../src/protocol/index.js';

const executor = new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1 } }));

afterAll(async () => {
  await executor.dispose();
});

/** What `console.log(value)` prints. */
function printed(value: unknown): string {
  return formatWithOptions({}, value);
}

it("prints the design's output for its three calls", async () => {
  const lines = [
    printed(await executor.execute('const answer = 6 * 7\nanswer', [])),
    printed(await executor.execute('return 6 * 7', [])),
    printed(await executor.execute('```js\nconsole.warn("late")\n```', [])),
  ];
  expect(lines).toEqual([
    '{ result: 42, logs: [] }',
    '{ result: 42, logs: [] }',
    "{ result: undefined, logs: [ '[warn] late' ] }",
  ]);
});

it('forwards cpuTimeout, and hands back the CPU-bound text unchanged', async () => {
  const outcome = await executor.execute('while (true) {}', [], { cpuTimeout: 200, timeout: 120_000 });
  expect(outcome).toEqual({ result: undefined, error: formatCpuTimeout(200), logs: [] });
});
