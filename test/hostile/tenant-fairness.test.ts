/**
 * One tenant cannot stall another through the memory budget (issue 30, finding 9). A real daemon
 * with two tokens and a small budget (320 MB): the hostile tenant holds everything it may (runs
 * that hold 60 MB each and wait on its own slow tool, and retained executions that hold 60 MB
 * each), and the other tenant's runs keep their latency: p95 within twice its own baseline,
 * measured in this test before the attack, plus 1 s. The 1 s is the issue's own allowance for a
 * shared machine's noise (two cores, several suites at once); without the rule the other tenant
 * waits as long as the hostile one's tool does (here up to 60 s).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecuteResult } from '../../src/protocol/index.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { startDaemon, stopAllDaemons, waitUntil } from '../support/daemon.js';
import { toolGate } from '../support/tool-gate.js';

afterAll(stopAllDaemons);

const RUNS = 20;
const HOLDERS = 16;
const RETAINS = 4;
/** How many holders the hostile tenant sends in all, resending those that end. */
const MAX_HOLDERS_SENT = 200;
/** The longest the hostile tool holds a run, should the test fail before it lets go. */
const HOSTILE_HOLD_MS = 60_000;

/** A program that holds 60 MB of its own memory (touched, so resident) and returns what it is told. */
const HOLD_60_MB = 'const ballast = new Uint8Array(60 * 1024 * 1024).fill(1);';

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1]!;
}

describe('two tenants of one daemon, with a memory budget of 320 MB', () => {
  it("the hostile tenant's held runs and retains leave the other tenant's latency near its baseline", {
    timeout: 240_000,
  }, async () => {
    const daemon = await startDaemon([
      '--token',
      'hostile-token',
      '--token',
      'victim-token',
      '--memory-budget-mb',
      '320',
      '--max-workers',
      '24',
      '--spare',
      '1',
    ]);
    const victim = await connect(daemon.url, { websocket: NodeWebSocket, token: 'victim-token' });
    const hostile = await connect(daemon.url, { websocket: NodeWebSocket, token: 'hostile-token' });
    // The hostile runs wait on the gate until the attack is over, or HOSTILE_HOLD_MS at the most.
    const held = toolGate();
    const bound = setTimeout(held.open, HOSTILE_HOLD_MS);
    const timed = async (): Promise<number> => {
      const started = performance.now();
      await expect(victim.execute({ code: 'async () => 6 * 7' })).resolves.toMatchObject({ result: 42 });
      return performance.now() - started;
    };
    const holders: Promise<ExecuteResult>[] = [];
    let attackOver = false;
    try {
      const baseline: number[] = [];
      for (let run = 0; run < RUNS; run += 1) baseline.push(await timed());

      // The attack: retained executions of 60 MB each, then runs of 60 MB each that wait on the tool.
      // Past its share, the hostile tenant's own work waits: none of it is awaited whole here.
      let retained = 0;
      const retains = Array.from({ length: RETAINS }, () =>
        hostile
          .execute({
            code: `async () => { ${HOLD_60_MB} return { touch: async () => ballast.length } }`,
            retainHandles: true,
          })
          .then((result) => {
            retained += 1;
            // Renewing its retains is the hostile tenant's right, and must not pin the budget either.
            if (result.executionId !== undefined)
              void hostile.invokeHandle({ executionId: result.executionId, handle: 'touch' }).catch(() => undefined);
            return result;
          }),
      );
      holders.push(...retains);
      // Each holder that ends (the budget's overrun rule ends the largest) is sent again at once,
      // so the hostile tenant always has work queued for every process that comes free.
      let sent = 0;
      const hold = (): void => {
        if (attackOver || sent >= MAX_HOLDERS_SENT) return;
        sent += 1;
        const holder = hostile.execute({
          code: `async () => { ${HOLD_60_MB} await gate.pass(); return ballast.length }`,
          providers: held.providers,
          dispatch: held.dispatch,
        });
        holders.push(holder);
        void holder.then(hold, hold);
      };
      for (let run = 0; run < HOLDERS; run += 1) hold();
      // What it was admitted holds its memory (retained, or waiting on the tool); the pool reads it
      // every 500 ms. Bounded: the hostile tenant's work past its share never starts.
      const attackStarted = performance.now();
      await waitUntil(() => retained + held.waiting() >= 2 || performance.now() - attackStarted > 20_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(retained + held.waiting()).toBeGreaterThanOrEqual(2);

      const attacked: number[] = [];
      for (let run = 0; run < RUNS; run += 1) attacked.push(await timed());
      const allowed = 2 * p95(baseline) + 1_000;
      console.log(
        `tenant fairness: baseline p95 ${p95(baseline).toFixed(0)} ms, under attack p95 ${p95(attacked).toFixed(0)} ms (allowed ${allowed.toFixed(0)} ms); the hostile tenant had ${retained} retained and ${held.waiting()} runs on its tool`,
      );
      expect({ p95: p95(attacked), within: p95(attacked) <= allowed }).toEqual({ p95: p95(attacked), within: true });
    } finally {
      attackOver = true;
      clearTimeout(bound);
      held.open();
      // Its waiting work is given up with its connection.
      await hostile.dispose();
      await Promise.allSettled(holders);
      await victim.dispose();
    }
  });
});
