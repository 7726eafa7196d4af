/**
 * The growth rule (`startsNow`, capacity.ts) on its own, and the pool growing under repeated
 * bursts when a start is slow: fake processes whose start takes 400 ms of a clock the test
 * advances, and runs that hold their member for 600 ms (three 200 ms tool calls). No workerd, no
 * timers; each test runs in milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { maxStartingFor } from '../../../../src/isolate/host/options/host-sizing.js';
import { DEFAULT_POOL } from '../../../../src/isolate/host/options/table.js';
import { nextPeak, startsNow } from '../../../../src/isolate/host/pool/capacity.js';
import { Pool } from '../../../../src/isolate/host/pool/pool.js';
import type { PoolSettings } from '../../../../src/isolate/host/pool/pool-settings.js';
import { FakeClock, FakeProcess, settle } from '../../../support/pool-fakes.js';

describe('startsNow', () => {
  const state = { wanted: 101, starting: 0, serving: 0, room: 1_000, maxStarting: 32 };

  it('starts one process for every member wanted that is neither serving nor starting, at once', () => {
    expect(startsNow({ ...state, maxStarting: 200 })).toBe(101);
    expect(startsNow({ ...state, serving: 40, starting: 20, maxStarting: 200 })).toBe(41);
  });

  it('starts at most maxStarting at a time, counting those still starting', () => {
    expect(startsNow(state)).toBe(32);
    expect(startsNow({ ...state, starting: 30 })).toBe(2);
    expect(startsNow({ ...state, starting: 32 })).toBe(0);
  });

  it("starts no more than the memory budget's room", () => {
    expect(startsNow({ ...state, room: 5 })).toBe(5);
    expect(startsNow({ ...state, room: 0 })).toBe(0);
  });

  it('starts nothing when the members serving and starting cover what is wanted', () => {
    expect(startsNow({ ...state, wanted: 10, serving: 8, starting: 2 })).toBe(0);
    expect(startsNow({ ...state, wanted: 10, serving: 12 })).toBe(0);
  });

  it('defaults maxStarting to 16 per core, from 4 to 128', () => {
    expect(maxStartingFor(1)).toBe(16);
    expect(maxStartingFor(2)).toBe(32);
    expect(maxStartingFor(64)).toBe(128);
  });
});

describe('nextPeak', () => {
  const busy = (wanted: number, now: number) => ({ wanted, now, busyOrWaiting: true });

  it('keeps the most members wanted while a burst lasts, though its first runs free members', () => {
    let peak = nextPeak(undefined, busy(101, 0), 30_000);
    peak = nextPeak(peak, busy(40, 900), 30_000);
    expect(peak).toEqual({ wanted: 101, at: 0 });
    expect(nextPeak(peak, busy(120, 1_000), 30_000)).toEqual({ wanted: 120, at: 1_000 });
  });

  it('forgets it once nothing is busy or waiting, so nothing is started after a burst', () => {
    const peak = nextPeak(undefined, busy(101, 0), 30_000);
    expect(nextPeak(peak, { wanted: 1, now: 700, busyOrWaiting: false }, 30_000)).toEqual({ wanted: 1, at: 700 });
  });

  it('forgets it once older than its window, when a member grown for it would be reaped', () => {
    const peak = nextPeak(undefined, busy(101, 0), 30_000);
    expect(nextPeak(peak, busy(5, 29_999), 30_000).wanted).toBe(101);
    expect(nextPeak(peak, busy(5, 30_000), 30_000)).toEqual({ wanted: 5, at: 30_000 });
  });
});

const START_MS = 400;
const RUN_MS = 600;
const STEP_MS = 10;

/**
 * A pool on default options for a 2-core host, whose every start takes `START_MS` on the test's
 * clock, and repeated bursts of `n` programs, each holding its member for `RUN_MS`. Returns each
 * burst's makespan and the pool's spawns.
 */
async function repeatedBursts(n: number, bursts: number, settings: Partial<PoolSettings> = {}) {
  const clock = new FakeClock();
  const pool = new Pool<FakeProcess>({
    settings: {
      ...(DEFAULT_POOL as Omit<PoolSettings, 'maxWorkers' | 'maxStarting' | 'memoryBudgetMb'>),
      maxWorkers: 1_000,
      maxStarting: maxStartingFor(2),
      memoryBudgetMb: 100_000,
      ...settings,
    },
    launch: () => new Promise((resolve) => clock.schedule(() => resolve(new FakeProcess()), START_MS)),
    clock,
    retainedOn: () => 0,
    measure: (process) => ({ privateMb: process.privateMb, sharedMb: process.sharedMb }),
    overBudget: () => {},
    evict: () => {},
    reclaim: () => {},
  });
  const makespans: number[] = [];
  for (let round = 0; round < bursts; round += 1) {
    const begun = clock.now();
    let done = 0;
    for (let i = 0; i < n; i += 1) {
      void pool.acquire().then((process) =>
        clock.schedule(() => {
          pool.release(process, 'keep');
          done += 1;
        }, RUN_MS),
      );
    }
    await settle();
    while (done < n) {
      clock.advance(STEP_MS);
      await settle();
    }
    makespans.push(clock.now() - begun);
    // A pause between bursts, well within idleTimeoutMs: the members stay.
    clock.advance(1_000);
    await settle();
  }
  const { spawns } = pool.stats();
  await pool.dispose();
  return { makespans, spawns };
}

describe('repeated bursts when a start takes 400 ms', () => {
  it('serves a burst of 100 within a few rounds of starts, and the second and later bursts on members already there', async () => {
    const { makespans, spawns } = await repeatedBursts(100, 4);
    // 32 starts at a time, kept on to the burst's peak although its first runs free members:
    // the 100 are covered within four rounds of starts, overlapping runs.
    expect(makespans[0]).toBeLessThanOrEqual(4 * START_MS + RUN_MS);

    for (const later of makespans.slice(1)) expect(later).toBeLessThanOrEqual(RUN_MS + 2 * STEP_MS);
    // Every program and the spare, and no start beyond: later bursts start nothing.
    expect(spawns).toBeLessThanOrEqual(100 + DEFAULT_POOL.spare);
  });

  it('is not starved by starts in series at a burst of 400 either', async () => {
    const { makespans } = await repeatedBursts(400, 4);
    expect(makespans[0]).toBeLessThanOrEqual(Math.ceil(401 / maxStartingFor(2)) * START_MS + RUN_MS);
    // Starts overlap runs: each burst grows the pool by about 130, so the fourth finds 400 there.
    for (const later of makespans.slice(1)) expect(later).toBeLessThanOrEqual(2 * RUN_MS);
    expect(makespans[3]).toBeLessThanOrEqual(RUN_MS + 2 * STEP_MS);
  });
});
