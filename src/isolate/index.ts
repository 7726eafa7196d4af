/**
 * `@supolka/cloudflare-codemode-executor/isolate`: the native executor that runs each execution
 * in a fresh workerd isolate, from a pool of workerd processes. Node only. See docs/isolate.md.
 */

export type { ConfinementOption } from './confinement/detect.js';
export { CONFINEMENT_OPTIONS } from './confinement/detect.js';
export type { ConfinementStats, IsolateExecutorStats } from './executor/executor-stats.js';
export { IsolateExecutor } from './executor/isolate-executor.js';
export type { RetainedClosedObserver } from './executor/retained-executions.js';
export type { RunObserver, RunReport } from './executor/run-observers.js';
export type {
  IsolateExecutorOptions,
  IsolateLimitOptions,
  IsolateLimits,
  IsolateOptionRow,
  IsolatePoolOptions,
} from './options.js';
export {
  DEFAULT_LIMITS,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  defaultMaxStarting,
  defaultMaxWorkers,
  defaultMemoryBudgetMb,
  ISOLATE_OPTION_ROWS,
  ISOLATE_OPTION_RULES,
  LIMIT_MAXIMA,
} from './options.js';
export type { PoolEnds } from './pool/member.js';
export type { MemberState, PoolMemberStats, PoolMemoryStats, PoolStats, PoolStatsOptions } from './pool/pool-stats.js';
export { SANDBOX_COMPATIBILITY_DATE, SANDBOX_COMPATIBILITY_FLAGS } from './sandbox/sandbox-constants.js';
