/**
 * A tenant that started its runs while alone does not stall one that arrives later (issue 41).
 * A real daemon with two tokens and a budget of 320 MB. Tenant A, alone, starts runs that each
 * hold 38 MB and wait on its own tool: alone, it may take the whole budget, and does. Tenant B
 * then connects: its trivial runs keep their latency, within twice their baseline (p95, measured
 * in this test while B was alone) plus 1 s, the issue's allowance for a shared machine's noise.
 * The rule that gets B its memory ends A's newest run, with a text naming the rule. Before it, B
 * waited as long as A's tool held its runs (here up to HOSTILE_HOLD_MS).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecuteResult } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { metricValue, startAdminDaemon, stopAllDaemons, waitUntil } from '../support/daemon.js';
import { toolGate } from '../support/tool-gate.js';

afterAll(stopAllDaemons);

const RUNS = 12;
const HOLDERS = 7;
/** How many runs A sends in all, resending those the budget's overrun rule ends. */
const MAX_HOLDERS_SENT = 40;
/** The longest A's tool holds a run, should the test fail before it lets go. */
const HOSTILE_HOLD_MS = 40_000;
/**
 * What each of A's runs holds: six such processes (about 46 MB each, and the 34 MB of pages all
 * share) are about 310 MB, within the budget, so none is ended for passing it, and no room is left
 * for another process, the spare's replacement included. A seventh run waits in the queue.
 */
const HOLD_MB = 38;
const HOLD = `const ballast = new Uint8Array(${HOLD_MB} * 1024 * 1024).fill(1);`;
const MIB = 2 ** 20;

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1]!;
}

describe('a tenant that took the budget while alone, and one that arrives', () => {
  it("the arriving tenant's runs keep their latency: the earlier tenant's newest run above its share ends", {
    timeout: 240_000,
  }, async () => {
    const daemon = await startAdminDaemon([
      '--token',
      'early-token',
      '--token',
      'late-token',
      '--memory-budget-mb',
      '320',
      '--max-workers',
      '24',
      '--spare',
      '1',
    ]);
    const held = toolGate();
    const bound = setTimeout(held.open, HOSTILE_HOLD_MS);
    const holders: Promise<ExecuteResult>[] = [];
    const early = await connect(daemon.url, { websocket: NodeWebSocket, token: 'early-token' });
    try {
      const timed = async (late: Awaited<ReturnType<typeof connect>>): Promise<number> => {
        const started = performance.now();
        await expect(late.execute({ code: 'async () => 6 * 7' })).resolves.toMatchObject({ result: 42 });
        return performance.now() - started;
      };
      // B's baseline, with A connected and idle (B's connection then closes: B is gone).
      const first = await connect(daemon.url, { websocket: NodeWebSocket, token: 'late-token' });
      const baseline: number[] = [];
      for (let run = 0; run < RUNS; run += 1) baseline.push(await timed(first));
      await first.dispose();

      // A, alone, starts runs that wait on its tool, until the budget holds no more.
      // Each that ends (the budget's overrun rule ends the largest) is sent again at once, so A
      // always has a run queued for any process that comes free, its spare included.
      let sent = 0;
      const hold = (): void => {
        if (sent >= MAX_HOLDERS_SENT) return;
        sent += 1;
        const holder = early.execute({
          code: `async () => { ${HOLD} await gate.pass(); return ballast.length }`,
          providers: held.providers,
          dispatch: held.dispatch,
        });
        holders.push(holder);
        void holder.then((outcome) => {
          if (outcome.error?.startsWith('The execution ran out of memory')) hold();
        }, hold);
      };
      for (let run = 0; run < HOLDERS; run += 1) hold();
      const used = () => metricValue(daemon, 'codemode_executor_pool_memory_used_bytes');
      await waitUntil(() => held.waiting() >= 3);
      // Its members' readings (every 500 ms) show what they hold: A has settled once two readings
      // a second apart agree, its runs on the tool unchanged.
      let usedBytes = 0;
      for (let reading = 0; reading < 40; reading += 1) {
        const [before, waiting] = [await used(), held.waiting()];
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        usedBytes = await used();
        if (usedBytes > 250 * MIB && Math.abs(usedBytes - before) < 8 * MIB && held.waiting() === waiting) break;
      }
      expect(usedBytes).toBeGreaterThan(250 * MIB);
      const waitingBefore = held.waiting();

      // B arrives.
      const late = await connect(daemon.url, { websocket: NodeWebSocket, token: 'late-token' });
      const arrived: number[] = [];
      for (let run = 0; run < RUNS; run += 1) arrived.push(await timed(late));
      await late.dispose();
      const allowed = 2 * p95(baseline) + 1_000;
      console.log(
        `early start: A held ${(usedBytes / MIB).toFixed(0)} MB (its tool called ${waitingBefore} times, ${sent} runs sent); B's baseline p95 ${p95(baseline).toFixed(0)} ms, on arrival p95 ${p95(arrived).toFixed(0)} ms, first ${arrived[0]!.toFixed(0)} ms (allowed ${allowed.toFixed(0)} ms)`,
      );
      expect({ p95: p95(arrived), within: p95(arrived) <= allowed }).toEqual({ p95: p95(arrived), within: true });

      held.open();
      const outcomes = await Promise.all(holders);
      const reclaimed = outcomes.filter(
        (outcome) => outcome.error !== undefined && !outcome.error.startsWith('The execution ran out of memory'),
      );
      expect(reclaimed.length).toBeGreaterThan(0);
      for (const { error } of reclaimed)
        expect(error).toMatch(
          /^The execution was ended so that another tenant's run could have memory: .*--tenant-memory-percent/,
        );
    } finally {
      clearTimeout(bound);
      held.open();
      await Promise.allSettled(holders);
      await early.dispose();
    }
  });
});
