/**
 * `@supolka/cloudflare-codemode-executor/isolate`: the native executor that runs each execution
 * in a fresh workerd isolate, from a pool of workerd processes. Node only. See docs/isolate.md.
 */

export { SANDBOX_COMPATIBILITY_DATE, SANDBOX_COMPATIBILITY_FLAGS } from './contract/sandbox-constants.js';
export type { ConfinementOption } from './host/confinement/detect.js';
export { CONFINEMENT_OPTIONS } from './host/confinement/detect.js';
export type { ConfinementStats, IsolateExecutorStats } from './host/executor/executor-stats.js';
export { type IsolateCallOptions, IsolateExecutor } from './host/executor/isolate-executor.js';
export type {
  RetainedCloseCause,
  RetainedClosedObserver,
  RetainedIdle,
} from './host/executor/retained-executions.js';
export type { RunObserver, RunReport } from './host/executor/run-observers.js';
export type { StartBreakdown, StartTimesStats } from './host/member/start-times.js';
export type {
  IsolateExecutorOptions,
  IsolateLimitOptions,
  IsolateLimits,
  IsolateOptionRow,
  IsolatePoolOptions,
} from './host/options.js';
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
} from './host/options.js';
export type { PoolEnds } from './host/pool/pool-member.js';
export type {
  MemberState,
  PoolMemberStats,
  PoolMemoryStats,
  PoolStats,
  PoolStatsOptions,
} from './host/pool/pool-stats.js';
export { Tenancy, type TenantFrame } from './host/pool/tenancy.js';
