/**
 * The rules between options, and the one on `pool.cgroup`, written once: the constructor
 * (resolve.ts) and the daemon's command line (src/server/command/cli-args.ts) each apply them and say the
 * breach in their own words (option names, or flag names).
 */
import { defaultMaxWorkers, defaultMemoryBudgetMb } from './host-sizing.js';
import { isCgroupPath } from './pool-options.js';
import { DEFAULT_MAX_TIMEOUT_MS, DEFAULT_POOL, DEFAULT_TIMEOUT_MS } from './table.js';

/** The default of `maxTimeout`: the larger of its own and `timeout`, so a longer default bound still fits. */
export function defaultMaxTimeout(timeout: number = DEFAULT_TIMEOUT_MS): number {
  return Math.max(DEFAULT_MAX_TIMEOUT_MS, timeout);
}

/**
 * `timeout` and `maxTimeout` in force when the default bound passes the largest one; null when it
 * does not (a null `timeout` asks for `maxTimeout` itself).
 */
export function timeoutAboveMax(
  timeout: number | null | undefined,
  maxTimeout: number | undefined,
): { timeout: number; maxTimeout: number } | null {
  if (timeout === null) return null;
  const effectiveTimeout = timeout ?? DEFAULT_TIMEOUT_MS;
  const effectiveMax = maxTimeout ?? defaultMaxTimeout(effectiveTimeout);
  return effectiveTimeout > effectiveMax ? { timeout: effectiveTimeout, maxTimeout: effectiveMax } : null;
}

/** The default of `pool.maxWorkers` for these pool options (it follows `pool.memoryBudgetMb`). */
export function maxWorkersOrDefault(pool: { maxWorkers?: number | undefined; memoryBudgetMb?: number | undefined }) {
  return pool.maxWorkers ?? defaultMaxWorkers(pool.memoryBudgetMb ?? defaultMemoryBudgetMb());
}

/** `minWorkers` and `maxWorkers` in force when the floor passes the bound; null when it does not. */
export function minWorkersAboveMax(pool: {
  minWorkers?: number | undefined;
  maxWorkers?: number | undefined;
  memoryBudgetMb?: number | undefined;
}): { minWorkers: number; maxWorkers: number } | null {
  const minWorkers = pool.minWorkers ?? DEFAULT_POOL.minWorkers;
  const maxWorkers = maxWorkersOrDefault(pool);
  return minWorkers > maxWorkers ? { minWorkers, maxWorkers } : null;
}

/**
 * The rules between options, and the one on `pool.cgroup`, for the daemon's command line, which
 * reads them through the `/isolate` entry and says a breach in its flags' words.
 */
export const ISOLATE_OPTION_RULES = Object.freeze({
  defaultMaxTimeout,
  timeoutAboveMax,
  minWorkersAboveMax,
  isCgroupPath,
});
