/** The options the pool's policy reads. */
import type { IsolateSettings } from '../options.js';

export type PoolSettings = Pick<
  IsolateSettings,
  | 'maxWorkers'
  | 'minWorkers'
  | 'spare'
  | 'idleTimeoutMs'
  | 'maxStarting'
  | 'maxQueue'
  | 'recycleAfterRuns'
  | 'maxRssMb'
  | 'maxNestedRuns'
  | 'memoryBudgetMb'
  | 'runsPerMember'
>;
