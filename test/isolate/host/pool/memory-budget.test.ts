/**
 * The pool's memory budget (pool.memoryBudgetMb), in one place:
 *
 * - admission by measured memory on the policy alone: fake processes whose memory the test sets,
 *   a clock it advances;
 * - admission on the real workerd: with a small budget the pool stops growing near it and the
 *   programs beyond it wait, none refused;
 * - a hostile program that grows within its own cap (pool.memoryLimitMb) but past its share of the
 *   budget, on the real workerd: its member ends, its run with the budget's text, the programs
 *   beside it complete, and the pool serves the next one.
 */
import { describe, expect, it } from 'vitest';
import { MEMORY_SAMPLE_MS } from '../../../../src/isolate/host/pool/memory-budget.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import type { RunEnding } from '../../../../src/protocol/run-endings.js';
import { type FakeProcess, poolWith, settle, track } from '../../../support/pool-fakes.js';
import { waitFor } from '../../../support/processes.js';
import { toolGate } from '../../../support/tool-gate.js';

/**
 * Every fake member holds 10 MB of its own and maps 30 MB of shared pages. The pool grows into nine
 * tenths of the budget, 75.6 MB of 84: four members fit (70 MB), a fifth would not (80).
 */
const BUDGET = { memoryBudgetMb: 84, maxWorkers: 100, maxStarting: 8, spare: 0, maxQueue: 0 };
const FITTING = 4;

/** Starts every pending launch until none is left. */
async function startUntilSettled(launcher: ReturnType<typeof poolWith>['launcher']): Promise<void> {
  while (launcher.starting() > 0) await launcher.startAll();
}

describe('admission against the memory budget', () => {
  it('stops growing once the members would pass the budget; the rest wait, none is refused', async () => {
    const { pool, launcher } = poolWith(BUDGET);
    const runs = Array.from({ length: 10 }, () => track(pool.acquire()));
    await startUntilSettled(launcher);
    expect(launcher.started).toHaveLength(FITTING);
    expect(runs.filter((run) => run.settled)).toHaveLength(FITTING);
    expect(runs.some((run) => run.error !== undefined)).toBe(false);
    const { memory, queued } = pool.stats();
    expect(queued).toBe(10 - FITTING);
    expect(memory.budgetMb).toBe(84);
    expect(memory.usedMb).toBe(FITTING * 10 + 30);
    expect(memory.usedMb).toBeLessThanOrEqual(memory.budgetMb);

    // Each member freed serves the next waiter: every program runs, on the same four members.
    for (let round = 0; round < 10 && runs.some((run) => !run.settled); round += 1) {
      for (const process of launcher.started) pool.release(process, 'keep');
      await settle();
    }
    expect(runs.every((run) => run.value !== undefined)).toBe(true);
    expect(pool.stats().spawns).toBe(FITTING);
    // The members gone, the use is none; the peak stays what they reached, read as each started.
    await pool.dispose();
    expect(pool.stats().memory.usedMb).toBe(0);
    expect(pool.stats().memory.peakMb).toBeGreaterThanOrEqual(FITTING * 10 + 30);
  });

  it('grows again when a reading finds the members smaller', async () => {
    const { pool, launcher, clock } = poolWith(BUDGET);
    const runs = Array.from({ length: 6 }, () => track(pool.acquire()));
    await startUntilSettled(launcher);
    expect(launcher.started).toHaveLength(FITTING);
    for (const process of launcher.started) process.privateMb = 5;
    clock.advance(MEMORY_SAMPLE_MS);
    await startUntilSettled(launcher);
    expect(runs.every((run) => run.value !== undefined)).toBe(true);
    expect(pool.stats().memory.usedMb).toBeLessThanOrEqual(84);
  });

  it('still runs programs one at a time when the budget is below a single member', async () => {
    const { pool, launcher } = poolWith({ ...BUDGET, memoryBudgetMb: 16 });
    const runs = [track(pool.acquire()), track(pool.acquire())];
    await startUntilSettled(launcher);
    expect(launcher.started).toHaveLength(1);
    expect(runs[0]!.value).toBe(launcher.started[0]);
    expect(runs[1]!.settled).toBe(false);
    pool.release(launcher.started[0]!, 'keep');
    await settle();
    expect(runs[1]!.value).toBe(launcher.started[0]);
  });
});

describe('nested runs and the budget', () => {
  it('starts a member for a nested run when the budget is spent, and serves it before the programs queued ahead', async () => {
    const { pool, launcher } = poolWith(BUDGET);
    const parents = Array.from({ length: FITTING }, () => track(pool.acquire()));
    await startUntilSettled(launcher);
    expect(parents.every((run) => run.value !== undefined)).toBe(true);
    const unrelated = track(pool.acquire());
    const nested = track(pool.acquire(undefined, undefined, true));
    // Waiting for memory would be waiting on its parent, which holds its member until it answers.
    expect(launcher.starting()).toBe(1);
    await launcher.startAll();
    expect(nested.value).toBe(launcher.started[FITTING]);
    expect(unrelated.settled).toBe(false);
    expect(launcher.starting()).toBe(0);
  });
});

describe('a budget overrun', () => {
  it('ends the member largest over its share, telling its run first, and spares the others', async () => {
    const { pool, launcher, clock, overBudget } = poolWith(BUDGET);
    const runs = Array.from({ length: 3 }, () => track(pool.acquire()));
    await startUntilSettled(launcher);
    const [small, large, larger] = runs.map((run) => run.value!) as [FakeProcess, FakeProcess, FakeProcess];
    // 30 shared + 10 + 20 + 40 = 100 MB against 84: the share of each is (84 - 30) / 3 = 18 MB.
    large.privateMb = 20;
    larger.privateMb = 40;
    clock.advance(MEMORY_SAMPLE_MS);
    await settle();
    expect(overBudget).toEqual([{ process: larger, overrun: { usedMb: 100, budgetMb: 84, memberMb: 40 } }]);
    expect(larger.killed).toBe(true);
    expect(large.killed).toBe(false);
    expect(small.killed).toBe(false);
    expect(pool.stats().ends.killed).toBe(1);
  });

  it('ends no one while the members fit', async () => {
    const { pool, launcher, clock, overBudget } = poolWith(BUDGET);
    const runs = Array.from({ length: FITTING }, () => track(pool.acquire()));
    await startUntilSettled(launcher);
    expect(runs.every((run) => run.value !== undefined)).toBe(true);
    clock.advance(MEMORY_SAMPLE_MS);
    await settle();
    expect(overBudget).toEqual([]);
    expect(launcher.started.some((process) => process.killed)).toBe(false);
  });
});

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

describe.runIf(process.platform === 'linux')('a member grown past its share of the memory budget', () => {
  it('ends, with the budget text; the others complete, and the pool serves the next program', async () => {
    const executor = new IsolateExecutor({ pool: { memoryBudgetMb: 150, spare: 0 } });
    try {
      const held = toolGate();
      const small = { code: 'async () => gate.pass()', providers: held.providers, dispatch: held.dispatch };
      // 120 MB written, well within pool.memoryLimitMb (512), held while it waits on its tool.
      const large = {
        code: 'async () => { const block = new Uint8Array(120 * 2 ** 20).fill(7); await gate.pass(); return block[5]; }',
        providers: held.providers,
        dispatch: held.dispatch,
      };
      const smalls = [executor.execute(small), executor.execute(small)];
      await waitFor(() => held.waiting() === 2, 'the small programs to wait');
      const grown = await executor.execute(large);
      // The pool's account comes as data; its text is made from it.
      expect(grown.ending?.code, grown.error).toBe('MEMORY_BUDGET');
      const { usedMb, memberMb } = grown.ending as Extract<RunEnding, { code: 'MEMORY_BUDGET' }>;
      expect(grown).toEqual({
        result: undefined,
        error: isolateText.memoryBudget(usedMb, 150, memberMb),
        ending: { code: 'MEMORY_BUDGET', usedMb, budgetMb: 150, memberMb },
        logs: [],
      });
      expect(usedMb).toBeGreaterThan(150);
      // The member ended held the most of the three, so at least their mean. (Its figure is a sample
      // taken while it fills its 120 MB: how far it got depends on the host's scheduling.)
      expect(memberMb * 3).toBeGreaterThanOrEqual(usedMb);
      await waitFor(() => executor.stats().ends.killed === 1, 'its member to be counted as killed');
      held.open();
      expect((await Promise.all(smalls)).map((result) => result.error ?? result.result)).toEqual([
        'through',
        'through',
      ]);
      expect(await executor.execute({ code: 'async () => 1' })).toEqual({ result: 1, logs: [] });
    } finally {
      await executor.dispose();
    }
  });
});
