/**
 * How many members the pool wants, and whether it holds idle ones beyond its floor: pure
 * arithmetic over counts, so the rules read (and are tested) apart from the processes.
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
