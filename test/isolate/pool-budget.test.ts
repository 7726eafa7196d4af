/**
 * Admission by measured memory on the real workerd: with a small pool.memoryBudgetMb the pool
 * stops growing near it and the programs beyond it wait, none refused. A member grown past its
 * share is in test/hostile/memory-budget.test.ts; the policy alone in pool-budget-policy.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { waitFor } from './processes.js';
import { toolGate } from './tool-gate.js';

const linux = process.platform === 'linux';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(linux)('the memory budget on workerd', () => {
  it('stops growing near a small budget: the programs beyond it wait, and every one completes', async () => {
    // About 9 MB a waiting member beside 34 MB of shared pages: 100 MB holds a handful, not ten.
    const executor = new IsolateExecutor({ pool: { memoryBudgetMb: 100, spare: 0 } });
    try {
      const held = toolGate();
      const request = { code: 'async () => gate.pass()', providers: held.providers, dispatch: held.dispatch };
      const runs = Array.from({ length: 10 }, () => executor.execute(request));
      await waitFor(() => held.waiting() > 0 && executor.stats().starting === 0, 'the first programs to wait');
      // Two readings of the members' memory, with nothing started between them: growth has stopped.
      await sleep(1_200);
      const stats = executor.stats();
      expect(stats.starting).toBe(0);
      expect(held.waiting()).toBeGreaterThan(0);
      expect(held.waiting()).toBeLessThan(10);
      expect(stats.queued).toBe(10 - held.waiting());
      expect(stats.memory.budgetMb).toBe(100);
      expect(stats.memory.usedMb).toBeLessThanOrEqual(100);
      expect(stats.memory.peakMb).toBeLessThanOrEqual(100);
      held.open();
      const results = await Promise.all(runs);
      expect(results.map((result) => result.error ?? result.result)).toEqual(Array(10).fill('through'));
      expect(executor.stats().ends.killed).toBe(0);
    } finally {
      await executor.dispose();
    }
  });
});
