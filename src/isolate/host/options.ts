/**
 * The construction options of `IsolateExecutor`, from the modules of options/: their types, the
 * option schema (one row each) with its defaults and bounds, the rules between options, the host-sized defaults, the constructor's checks,
 * each request's bounds, and the frame sizes the caps imply.
 */
export { MAX_OUTCOME_RPC_BYTES, maxSupervisorFrameBytes } from './options/frame-size.js';
export { defaultMaxStarting, defaultMaxWorkers, defaultMemoryBudgetMb, maxWorkersFor } from './options/host-sizing.js';
export { resolveCpuTimeout, resolveTimeout } from './options/request-bounds.js';
export { resolveSettings } from './options/resolve.js';
export { ISOLATE_OPTION_RULES } from './options/rules.js';
export {
  DEFAULT_LIMITS,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  ISOLATE_OPTION_ROWS,
  type IsolateOptionRow,
  LIMIT_MAXIMA,
} from './options/table.js';
export type {
  IsolateExecutorOptions,
  IsolateLimitOptions,
  IsolateLimits,
  IsolatePoolOptions,
  IsolateSettings,
} from './options/types.js';
