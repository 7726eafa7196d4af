/**
 * The option table of `IsolateExecutor`: each option's default, its bounds, and the daemon's flag
 * that sets it, written once. The constructor's checks (resolve.ts), the daemon's command line
 * (src/server/cli-args.ts) and the docs' options table (checked by
 * test/isolate/host/options/option-table.test.ts) all read it. `memoryBudgetMb`, `maxWorkers` and `maxStarting` default by the host (host-sizing.ts).
 */
import { DEFAULT_MAX_CODE_BYTES } from '../../../protocol/code-size.js';
import type { ConfinementOption } from '../confinement/detect.js';
import { MAX_TIMER_MS } from './max-timer.js';
import type { IsolateExecutorOptions, IsolateLimits, IsolatePoolOptions } from './types.js';

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_TIMEOUT_MS = 300_000;
/** Confine where the host allows it (docs/security.md). */
export const DEFAULT_CONFINEMENT: ConfinementOption = 'auto';
/** Generous: on a loaded 2-core box a spawn that normally takes 40 ms can take seconds. */
export const STARTUP_TIMEOUT_MS = 20_000;

/** The pool's number options whose defaults depend on the host (host-sizing.ts). */
type HostSizedPoolOption = 'maxWorkers' | 'maxStarting' | 'memoryBudgetMb';

/** The pool options whose defaults are plain numbers (`memoryBudgetMb`, `maxWorkers` and `maxStarting` depend on the host). */
export const DEFAULT_POOL = Object.freeze({
  minWorkers: 0,
  spare: 1,
  idleTimeoutMs: 30_000,
  maxQueue: 5_000,
  recycleAfterRuns: 200,
  maxRssMb: 512,
  heapLimitMb: 256,
  memoryLimitMb: 512,
  maxRetained: 64,
  retainedIdleTimeoutMs: 300_000,
  maxNestedRuns: 16,
} satisfies Record<Exclude<keyof IsolatePoolOptions, 'cgroup' | HostSizedPoolOption>, number>);

const MIB = 2 ** 20;
export const DEFAULT_LIMITS: Readonly<IsolateLimits> = Object.freeze({
  maxCodeBytes: DEFAULT_MAX_CODE_BYTES,
  maxRequestBytes: 16 * MIB,
  maxResultBytes: 16 * MIB,
  maxToolArgsBytes: 16 * MIB,
  maxToolResultBytes: 16 * MIB,
  maxConcurrentToolCalls: 256,
  maxConcurrentToolArgsBytes: 32 * MIB,
  maxLogLines: 10_000,
  maxLogBytes: 4 * MIB,
  maxRequestBodyBytes: 32 * MIB,
  maxResponseBodyBytes: 32 * MIB,
  maxConcurrentFetches: 256,
  maxProcessOutputBytes: MIB,
});
/**
 * The largest result, tool argument, tool result and log text: each crosses workerd's RPC inside
 * the pool member, which refuses a value over 32 MiB; this leaves room for its framing.
 */
const MAX_RPC_PAYLOAD_BYTES = 30 * MIB;
/** The largest value each size cap takes. */
export const LIMIT_MAXIMA: Readonly<IsolateLimits> = Object.freeze({
  // The code goes into the start message, which maxRequestBytes bounds.
  maxCodeBytes: MAX_RPC_PAYLOAD_BYTES,
  maxRequestBytes: MAX_RPC_PAYLOAD_BYTES,
  maxResultBytes: MAX_RPC_PAYLOAD_BYTES,
  maxToolArgsBytes: MAX_RPC_PAYLOAD_BYTES,
  maxToolResultBytes: MAX_RPC_PAYLOAD_BYTES,
  maxConcurrentToolCalls: 10_000,
  maxConcurrentToolArgsBytes: 1024 * MIB,
  maxLogLines: 10_000_000,
  maxLogBytes: MAX_RPC_PAYLOAD_BYTES,
  maxRequestBodyBytes: 1024 * MIB,
  maxResponseBodyBytes: 1024 * MIB,
  // Each fetch in flight holds a descriptor of the member, whose confined limit is 1024.
  maxConcurrentFetches: 900,
  maxProcessOutputBytes: 1024 * MIB,
});

/**
 * What a number option takes: an integer from `min` (to `max`, where there is one), or a positive
 * finite number (`min` 0, itself excluded). `flag`: the daemon's flag that sets it, where one does.
 */
export interface NumberRule {
  readonly kind: 'integer' | 'positive';
  readonly min: number;
  readonly max?: number;
  readonly flag?: string;
}

/** The top-level number options. */
export const TOP_NUMBERS = {
  timeout: { kind: 'positive', min: 0, flag: 'timeout' },
  maxTimeout: { kind: 'positive', min: 0, flag: 'max-timeout' },
  cpuTimeout: { kind: 'positive', min: 0, flag: 'cpu-timeout' },
} as const satisfies Record<keyof IsolateExecutorOptions & ('timeout' | 'maxTimeout' | 'cpuTimeout'), NumberRule>;

/** The pool's number options, in the order the daemon's --help lists those with a flag. */
export const POOL_NUMBERS = {
  maxWorkers: { kind: 'integer', min: 1, flag: 'max-workers' },
  minWorkers: { kind: 'integer', min: 0, flag: 'min-workers' },
  spare: { kind: 'integer', min: 0, flag: 'spare' },
  idleTimeoutMs: { kind: 'integer', min: 0, flag: 'idle-timeout-ms' },
  maxStarting: { kind: 'integer', min: 1, flag: 'max-starting' },
  maxQueue: { kind: 'integer', min: 0, flag: 'max-queue' },
  recycleAfterRuns: { kind: 'integer', min: 1, flag: 'recycle-after-runs' },
  maxRssMb: { kind: 'positive', min: 0, flag: 'max-rss-mb' },
  heapLimitMb: { kind: 'integer', min: 16, flag: 'heap-limit-mb' },
  memoryLimitMb: { kind: 'integer', min: 64, flag: 'memory-limit-mb' },
  // Below one member's private memory and the binary's shared pages, the pool holds one member alone.
  memoryBudgetMb: { kind: 'integer', min: 16, flag: 'memory-budget-mb' },
  maxRetained: { kind: 'integer', min: 0 },
  // A Node timer closes it, so no longer than the longest delay a timer takes.
  retainedIdleTimeoutMs: { kind: 'integer', min: 1, max: MAX_TIMER_MS },
  maxNestedRuns: { kind: 'integer', min: 0 },
} as const satisfies Record<Exclude<keyof IsolatePoolOptions, 'cgroup'>, NumberRule>;

/**
 * What each pool number option does, written down once: `limit` bounds what a program can use up
 * (passing it fails the run or the call, with a text that names it; docs/isolate.md's Limits table
 * lists it, beside the timeouts and every `limits.*` cap), `sizing` shapes the pool (passing it
 * makes programs wait, or replaces a process between runs, and fails nothing).
 */
export const POOL_NUMBER_ROLES = {
  maxWorkers: 'sizing',
  minWorkers: 'sizing',
  spare: 'sizing',
  idleTimeoutMs: 'sizing',
  maxStarting: 'sizing',
  maxQueue: 'limit',
  recycleAfterRuns: 'sizing',
  maxRssMb: 'sizing',
  heapLimitMb: 'limit',
  memoryLimitMb: 'limit',
  memoryBudgetMb: 'limit',
  maxRetained: 'limit',
  retainedIdleTimeoutMs: 'limit',
  maxNestedRuns: 'limit',
} as const satisfies Record<keyof typeof POOL_NUMBERS, 'limit' | 'sizing'>;

/** The pool's string option: `pool.cgroup`, and its daemon flag. */
export const CGROUP_FLAG = 'cgroup';

/** Each size cap: an integer from 1 to its maximum, and its daemon flag. */
export const LIMIT_NUMBERS = {
  maxCodeBytes: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxCodeBytes, flag: 'max-code-bytes' },
  maxRequestBytes: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxRequestBytes, flag: 'max-request-bytes' },
  maxResultBytes: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxResultBytes, flag: 'max-result-bytes' },
  maxToolArgsBytes: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxToolArgsBytes, flag: 'max-tool-args-bytes' },
  maxToolResultBytes: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxToolResultBytes, flag: 'max-tool-result-bytes' },
  maxLogLines: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxLogLines, flag: 'max-log-lines' },
  maxLogBytes: { kind: 'integer', min: 1, max: LIMIT_MAXIMA.maxLogBytes, flag: 'max-log-bytes' },
  maxRequestBodyBytes: {
    kind: 'integer',
    min: 1,
    max: LIMIT_MAXIMA.maxRequestBodyBytes,
    flag: 'max-request-body-bytes',
  },
  maxResponseBodyBytes: {
    kind: 'integer',
    min: 1,
    max: LIMIT_MAXIMA.maxResponseBodyBytes,
    flag: 'max-response-body-bytes',
  },
  maxConcurrentFetches: {
    kind: 'integer',
    min: 1,
    max: LIMIT_MAXIMA.maxConcurrentFetches,
    flag: 'max-concurrent-fetches',
  },
  maxConcurrentToolCalls: {
    kind: 'integer',
    min: 1,
    max: LIMIT_MAXIMA.maxConcurrentToolCalls,
    flag: 'max-concurrent-tool-calls',
  },
  maxConcurrentToolArgsBytes: {
    kind: 'integer',
    min: 1,
    max: LIMIT_MAXIMA.maxConcurrentToolArgsBytes,
    flag: 'max-concurrent-tool-args-bytes',
  },
  maxProcessOutputBytes: {
    kind: 'integer',
    min: 1,
    max: LIMIT_MAXIMA.maxProcessOutputBytes,
    flag: 'max-process-output-bytes',
  },
} as const satisfies Record<keyof IsolateLimits, NumberRule>;

/** Whether `value` is what the rule takes. */
export function meetsRule(rule: NumberRule, value: unknown): value is number {
  if (typeof value !== 'number') return false;
  if (rule.kind === 'positive') return Number.isFinite(value) && value > rule.min;
  return Number.isSafeInteger(value) && value >= rule.min && (rule.max === undefined || value <= rule.max);
}

/** The smallest integer the rule takes: what a daemon flag, which takes integers, starts from. */
export function smallestInteger(rule: NumberRule): number {
  return rule.kind === 'positive' ? Math.floor(rule.min) + 1 : rule.min;
}
