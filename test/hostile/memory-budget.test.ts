/**
 * The pool's memory budget against a program that grows within its own cap (pool.memoryLimitMb)
 * but past its share of the pool's budget, on the real workerd: its member ends, its run with the
 * budget's text, the programs beside it complete, and the pool serves the next one.
 */
import { describe, expect, it } from 'vitest';
import { isolateText } from '../../src/isolate/contract/texts.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import { waitFor } from '../isolate/processes.js';
import { toolGate } from '../isolate/tool-gate.js';

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
      const match = /held (\d+) MB, above .* held the most, (\d+) MB/.exec(grown.error ?? '');
      expect(match, grown.error).not.toBeNull();
      const [usedMb, memberMb] = [Number(match![1]), Number(match![2])];
      expect(grown).toEqual({ result: undefined, error: isolateText.memoryBudget(usedMb, 150, memberMb), logs: [] });
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
