/**
 * Tenants of one pool (issue 30, finding 9), on the pool's policy alone: fake processes of 10 MB
 * each, and two tenants present. A tenant holds at most its share of the budget while another is
 * present, and its retained executions are evicted before another tenant's run starves.
 */
import { describe, expect, it } from 'vitest';
import { Tenancy } from '../../../../src/isolate/host/pool/tenancy.js';
import { poolWith, settle, track } from '../../../support/pool-fakes.js';

/** Starts every pending launch until none is left. */
async function startUntilSettled(launcher: ReturnType<typeof poolWith>['launcher']): Promise<void> {
  // An end settles on a later turn, and the launch it allows only then: a few turns more.
  for (let round = 0; round < 50; round += 1) {
    await settle();
    if (launcher.starting() === 0 && round > 3) return;
    await launcher.startAll();
  }
}

describe('two tenants of one pool', () => {
  it('holds a tenant to its share while the other is present; alone it may use the whole budget', async () => {
    // The pool grows into 180 MB: 30 shared, then 12 members of 10 MB (at the 12 MB estimate).
    const settings = { memoryBudgetMb: 200, maxWorkers: 100, maxStarting: 8, spare: 0, maxQueue: 100 };
    const tenancy = new Tenancy(0.5);
    const leaveA = tenancy.join('A');

    const alone = poolWith(settings);
    const aloneRuns = Array.from({ length: 12 }, () =>
      track(alone.pool.acquire(undefined, undefined, false, { share: tenancy.frame('A') })),
    );
    await startUntilSettled(alone.launcher);
    expect(aloneRuns.filter((run) => run.value !== undefined)).toHaveLength(12);
    await alone.pool.dispose();

    const leaveB = tenancy.join('B');
    const { pool, launcher } = poolWith(settings);
    const runsA = Array.from({ length: 12 }, () =>
      track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('A') })),
    );
    await startUntilSettled(launcher);
    // Its share is half of the 180 MB the pool grows into: nine members of 10 MB.
    expect(runsA.filter((run) => run.value !== undefined)).toHaveLength(9);
    const runB = track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('B') }));
    await startUntilSettled(launcher);
    expect(runB.value).toBeDefined();
    // The other tenant gone, the first one's waiters are served at the next release.
    leaveB();
    pool.release(runB.value!, 'keep');
    await startUntilSettled(launcher);
    expect(runsA.filter((run) => run.value !== undefined)).toHaveLength(12);
    leaveA();
    await pool.dispose();
  });

  it("evicts the retained executions of a tenant over its share before the other tenant's run starves", async () => {
    // The pool grows into 90 MB: 30 shared, then five members of 10 MB; a tenant's share is 45 MB.
    const { pool, launcher, retained, evicted } = poolWith({
      memoryBudgetMb: 100,
      maxWorkers: 100,
      maxStarting: 8,
      spare: 0,
      maxQueue: 100,
    });
    const tenancy = new Tenancy(0.5);
    const leave = [tenancy.join('A'), tenancy.join('B')];
    const runsA = Array.from({ length: 5 }, () =>
      track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('A') })),
    );
    await startUntilSettled(launcher);
    const heldByA = runsA.flatMap((run) => (run.value === undefined ? [] : [run.value]));
    expect(heldByA).toHaveLength(5);
    // Each run retains its execution: its process keeps the memory after the run.
    for (const process of heldByA) {
      retained.set(process, 1);
      pool.release(process, 'keep');
    }
    const runB = track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('B') }));
    await startUntilSettled(launcher);
    expect(runB.value).toBeDefined();
    expect(evicted.length).toBeGreaterThanOrEqual(1);
    expect(evicted.every((process) => heldByA.includes(process))).toBe(true);
    for (const done of leave) done();
    await pool.dispose();
  });

  it('ends the newest run of a tenant that took the budget while alone, once another tenant waits for memory', async () => {
    // The pool grows into 90 MB: 30 shared, then members of 10 MB; a tenant's share is 45 MB.
    const { pool, launcher, clock, reclaimed } = poolWith({
      memoryBudgetMb: 100,
      maxWorkers: 100,
      maxStarting: 8,
      spare: 0,
      maxQueue: 100,
    });
    const tenancy = new Tenancy(0.5);
    const leaveA = tenancy.join('A');
    // Alone, A takes all the budget lets the pool grow into: five runs, which it holds.
    const runsA = Array.from({ length: 5 }, () =>
      track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('A') })),
    );
    await startUntilSettled(launcher);
    const heldByA = runsA.flatMap((run) => (run.value === undefined ? [] : [run.value]));
    expect(heldByA).toHaveLength(5);
    const leaveB = tenancy.join('B');
    const runB = track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('B') }));
    await startUntilSettled(launcher);
    // A's newest run is ended, told why with what A held and its share; B gets the room it leaves.
    expect(reclaimed).toEqual([{ process: heldByA.at(-1), reclaim: { heldMb: 50, shareMb: 45, percent: 50 } }]);
    expect(heldByA.at(-1)!.killed).toBe(true);
    pool.release(heldByA.at(-1)!, 'kill');
    await startUntilSettled(launcher);
    expect(runB.value).toBeDefined();
    // B served, A (at 40 MB, within its share) keeps its other four runs, even at the next readings.
    clock.advance(2_000);
    await startUntilSettled(launcher);
    expect(reclaimed).toHaveLength(1);
    expect(heldByA.slice(0, 4).every((process) => !process.killed)).toBe(true);
    leaveA();
    leaveB();
    await pool.dispose();
  });

  it('ends one run at a time: the next only once the last has exited', async () => {
    const { pool, launcher, reclaimed } = poolWith({
      memoryBudgetMb: 100,
      maxWorkers: 100,
      maxStarting: 8,
      spare: 0,
      maxQueue: 100,
    });
    const tenancy = new Tenancy(0.5);
    const leaveA = tenancy.join('A');
    const runsA = Array.from({ length: 5 }, () =>
      track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('A') })),
    );
    await startUntilSettled(launcher);
    const heldByA = runsA.flatMap((run) => (run.value === undefined ? [] : [run.value]));
    // A's processes hold more than measured at first, and its newest does not exit when killed.
    for (const process of heldByA) process.privateMb = 14;
    const newest = heldByA.at(-1)!;
    newest.kill = () => {
      newest.killed = true;
    };
    const leaveB = tenancy.join('B');
    const runsB = Array.from({ length: 3 }, () =>
      track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('B') })),
    );
    await startUntilSettled(launcher);
    expect(reclaimed.map(({ process }) => process)).toEqual([newest]);
    leaveA();
    leaveB();
    newest.die();
    await pool.dispose();
    expect(runsB.every((run) => run.settled)).toBe(true);
  });

  it("holds a gone tenant's retained executions to its share at each reading, with no one else present", async () => {
    // A tenant's share is 45 MB of the 90 the pool grows into.
    const { pool, launcher, clock, retained, evicted } = poolWith({
      memoryBudgetMb: 100,
      maxWorkers: 100,
      maxStarting: 8,
      spare: 0,
      maxQueue: 100,
    });
    const tenancy = new Tenancy(0.5);
    const leave = tenancy.join('A');
    const runsA = Array.from({ length: 5 }, () =>
      track(pool.acquire(undefined, undefined, false, { share: tenancy.frame('A') })),
    );
    await startUntilSettled(launcher);
    const heldByA = runsA.flatMap((run) => (run.value === undefined ? [] : [run.value]));
    for (const process of heldByA) {
      retained.set(process, 1);
      pool.release(process, 'keep');
    }
    // While A is connected and alone, its retained executions stay.
    clock.advance(1_000);
    await settle();
    expect(evicted).toEqual([]);
    // A's connection goes: at the next reading, retained executions beyond its share are evicted.
    leave();
    clock.advance(1_000);
    await settle();
    expect(evicted).toHaveLength(1);
    expect(heldByA.filter((process) => !process.killed)).toHaveLength(4);
    await pool.dispose();
  });
});
