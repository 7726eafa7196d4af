/**
 * How many members the pool wants, how many it starts now, and whether it holds idle ones beyond
 * its floor: pure arithmetic over counts, so the rules read (and are tested) apart from the
 * processes.
 */
import type { PoolSettings } from './pool-settings.js';

/** What the pool counts at one moment. */
export interface PoolCounts {
  /** Processes still starting. */
  starting: number;
  /** Members that can take runs (neither draining nor ending), busy or idle. */
  serving: number;
  /** Of those, the busy ones. */
  servingBusy: number;
  /** Waiters any member can serve. */
  untargetedWaiters: number;
  /** Waiters started from a tool call of a running execution. */
  nestedWaiters: number;
  /** Runs within `maxWorkers`. */
  busy: number;
  /** Nested runs admitted beyond `maxWorkers`. */
  overshoot: number;
}

/**
 * The members (live and starting) that cover the busy ones, the runnable waiters and the spares,
 * and `minWorkers`; never beyond `maxWorkers` plus the nested runs beyond it and the spares.
 */
export function membersWanted(counts: PoolCounts, settings: PoolSettings): number {
  const { maxWorkers, minWorkers, spare, maxNestedRuns } = settings;
  const nestedRunnable = Math.min(counts.nestedWaiters, Math.max(0, maxNestedRuns - counts.overshoot));
  const runnable = Math.min(counts.untargetedWaiters, Math.max(0, maxWorkers - counts.busy) + nestedRunnable);
  const ceiling = maxWorkers + counts.overshoot + nestedRunnable + spare;
  return Math.min(ceiling, Math.max(minWorkers, counts.servingBusy + runnable + spare));
}

/** Whether there are idle members beyond the floor: `minWorkers`, and the spares beyond the busy members. */
export function idleAboveFloor(
  counts: Pick<PoolCounts, 'starting' | 'serving' | 'servingBusy'>,
  settings: PoolSettings,
): boolean {
  const idle = counts.serving - counts.servingBusy;
  return (
    idle > 0 && counts.serving + counts.starting > Math.max(settings.minWorkers, counts.servingBusy + settings.spare)
  );
}

/**
 * The most members wanted (`membersWanted`) at one moment within the last window, and when. A
 * burst's waiters are soon served by members its first runs free, so what is wanted falls before
 * the pool has grown to the burst: growing to the peak instead lets the next burst find its
 * members there, in the way the reference serves a repeated burst from isolates already warm.
 */
export interface DemandPeak {
  wanted: number;
  at: number;
}

/**
 * The peak after a moment at which `wanted` members were wanted: a higher one replaces it. It is
 * forgotten once no run is busy and none waits (the burst is over: nothing is started for it
 * afterwards), and once older than `windowMs` (`idleTimeoutMs`: after that an idle member grown
 * for it is reaped, and starting it again would only churn).
 */
export function nextPeak(
  peak: DemandPeak | undefined,
  moment: { wanted: number; now: number; busyOrWaiting: boolean },
  windowMs: number,
): DemandPeak {
  const { wanted, now, busyOrWaiting } = moment;
  if (peak === undefined || !busyOrWaiting || wanted >= peak.wanted || now - peak.at >= windowMs)
    return { wanted, at: now };
  return peak;
}

/** What the growth rule reads at one moment. */
export interface GrowthState {
  /** Members (live and starting) the pool wants: `membersWanted` now, or its recent peak (`nextPeak`). */
  wanted: number;
  /** Processes still starting. */
  starting: number;
  /** Members that can take runs, busy or idle. */
  serving: number;
  /** Members the memory budget has room for beyond those. */
  room: number;
  /** Processes that may start at once (`pool.maxStarting`). */
  maxStarting: number;
}

/**
 * How many processes to start now: one for every member wanted that is neither serving nor
 * starting, so the pool grows with the work that waits, at once rather than a few at a time;
 * within the budget's room and `maxStarting`. Most of a start is waiting (on the kernel, on
 * workerd loading), not computing, so starts in parallel finish much sooner than in series: with
 * a 400 ms start, 100 waiting programs would otherwise wait for 25 rounds of 4 starts. How long a
 * start takes does not enter: a waiter takes whichever comes first, a member freed by its run or
 * one started for it, and a start that lost that race stays as an idle member for
 * `idleTimeoutMs`, ready for the next burst.
 */
export function startsNow(state: GrowthState): number {
  const { wanted, starting, serving, room, maxStarting } = state;
  return Math.max(0, Math.min(wanted - starting - serving, room, maxStarting - starting));
}
