/**
 * Fairness with default options on the real workerd: 100 programs that wait on their tools run at
 * once beside 4 spinning ones bounded by cpuTimeout, and every one of them finishes correctly. A
 * spin costs only its own process and its bound. (How much the spins slow the others is measured
 * by the benchmark, not asserted here: speed is not a test.)
 */
import { describe, expect, it } from 'vitest';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../../../src/protocol/dispatch.js';
import { formatCpuTimeout } from '../../../../src/protocol/texts.js';

const WAITING = 100;
const SPINNING = 4;
const TOOL_MS = 200;

describe('100 waiting programs beside 4 spinning ones', () => {
  it('all finish correctly with default options, the waiting ones all at once', { timeout: 180_000 }, async () => {
    const executor = new IsolateExecutor();
    // The first tool call of every waiting program holds it until all of them have made theirs:
    // only a pool that runs 100 programs at once gets past it.
    let arrived = 0;
    let allArrived: () => void = () => {};
    const everyone = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    const dispatch = createEnvelopeDispatch(
      {
        api: async (_tool, [step]) => {
          if (step === 0 && ++arrived === WAITING) allArrived();
          if (step === 0) await everyone;
          await new Promise((resolve) => setTimeout(resolve, TOOL_MS));
          return (step as number) + 1;
        },
      },
      { active: true },
    );
    const waiting = (index: number) =>
      executor.execute({
        code: `async () => { let step = 0; for (let i = 0; i < 3; i++) step = await api.wait(step); return [${index}, step] }`,
        providers: [{ name: 'api', tools: ['wait'] }],
        dispatch,
      });
    try {
      expect(executor.stats().maxWorkers).toBeGreaterThanOrEqual(WAITING + SPINNING);
      const spins = Array.from({ length: SPINNING }, () =>
        executor.execute({ code: 'async () => { while (true) {} }', cpuTimeout: 1_000 }),
      );
      const outcomes = await Promise.all(Array.from({ length: WAITING }, (_, index) => waiting(index)));
      expect(outcomes).toEqual(Array.from({ length: WAITING }, (_, index) => ({ result: [index, 3], logs: [] })));
      expect(await Promise.all(spins)).toEqual(
        Array.from({ length: SPINNING }, () => ({
          result: undefined,
          error: formatCpuTimeout(1_000),
          ending: { code: 'CPU_TIMEOUT', cpuTimeout: 1_000 },
          logs: [],
        })),
      );
      const { ends, queued } = executor.stats();
      expect(queued).toBe(0);
      // Only the spinners' processes were ended, each for its own run.
      expect(ends).toMatchObject({ died: 0, recycled: 0 });
      expect(ends.killed).toBeLessThanOrEqual(SPINNING);
    } finally {
      await executor.dispose();
    }
  });
});
