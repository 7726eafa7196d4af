/**
 * What `IsolateExecutor.stats` answers: the pool's snapshot, with the retained executions and the
 * confinement in force added, composed here so the executor only gathers the parts.
 */
import type { Confinement, ConfinementOption } from '../confinement/detect.js';
import { confinementText } from '../confinement/texts.js';
import type { StartTimesStats } from '../member/start-times.js';
import type { PoolStats } from '../pool/pool-stats.js';

/** Which confinement mode is in force, and why (docs/security.md). */
export interface ConfinementStats {
  /** The `confinement` option. */
  requested: ConfinementOption;
  /** Whether every member runs confined. */
  confined: boolean;
  /** What confines them, or what this host is missing. */
  reason: string;
  /** One line saying both, for a start-up log. */
  summary: string;
}

export interface IsolateExecutorStats extends PoolStats {
  /** Retained executions not yet closed (each holds a process of its own). */
  retained: number;
  /** The bound in force on `retained` (`pool.maxRetained`). */
  maxRetained: number;
  /** How long the longest idle retained execution has gone without a call, in ms; 0 when none is idle. */
  retainedOldestIdleMs: number;
  confinement: ConfinementStats;
  /** Where the members' starts went: how many completed, and their mean time, whole and by step (start-times.ts). */
  starts: StartTimesStats;
}

export function executorStats(
  pool: PoolStats,
  retained: Pick<IsolateExecutorStats, 'retained' | 'maxRetained' | 'retainedOldestIdleMs'>,
  { requested, confined, reason }: Confinement,
  starts: StartTimesStats,
): IsolateExecutorStats {
  return {
    ...pool,
    ...retained,
    starts,
    confinement: { requested, confined, reason, summary: confinementText.summary(requested, confined, reason) },
  };
}
