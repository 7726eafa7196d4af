/**
 * The constructor's checks: each option against its rule in the option table (table.ts) and the
 * rules between options (rules.ts), refused with a text that names the option a value broke.
 */
import { describeValue } from '../../../protocol/describe-value.js';
import { ExecutorError } from '../../../protocol/errors.js';
import { everyKey } from '../../../protocol/every-key.js';
import { isolateText, optionRuleText } from '../../contract/texts.js';
import { CONFINEMENT_OPTIONS } from '../confinement/detect.js';
import { defaultMaxStarting, defaultMemoryBudgetMb } from './host-sizing.js';
import { defaultMaxTimeout, isCgroupPath, maxWorkersOrDefault, minWorkersAboveMax, timeoutAboveMax } from './rules.js';
import {
  DEFAULT_CONFINEMENT,
  DEFAULT_LIMITS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  LIMIT_NUMBERS,
  meetsRule,
  type NumberRule,
  POOL_NUMBERS,
  STARTUP_TIMEOUT_MS,
  TOP_NUMBERS,
} from './table.js';
import type { IsolateExecutorOptions, IsolateLimits, IsolatePoolOptions, IsolateSettings } from './types.js';

const TOP_LEVEL = everyKey<IsolateExecutorOptions>({
  timeout: true,
  maxTimeout: true,
  cpuTimeout: true,
  outbound: true,
  pool: true,
  limits: true,
  confinement: true,
});
/** In the order `IsolatePoolOptions` declares them, as a refusal lists them. */
const POOL_LEVEL = everyKey<IsolatePoolOptions>({
  maxWorkers: true,
  minWorkers: true,
  spare: true,
  idleTimeoutMs: true,
  maxStarting: true,
  maxQueue: true,
  recycleAfterRuns: true,
  maxRssMb: true,
  heapLimitMb: true,
  memoryLimitMb: true,
  memoryBudgetMb: true,
  cgroup: true,
  maxRetained: true,
  retainedIdleTimeoutMs: true,
  maxNestedRuns: true,
});
const LIMITS_LEVEL = Object.keys(DEFAULT_LIMITS) as (keyof IsolateLimits)[];

function invalid(message: string): ExecutorError {
  return new ExecutorError('INVALID_REQUEST', message);
}

function rejectUnknown(record: object, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      throw invalid(isolateText.optionUnknown(`${prefix}${key}`, known.map((name) => `${prefix}${name}`).join(', ')));
    }
  }
}

/** The value, checked against its rule; `fallback` when undefined. */
function number(option: string, rule: NumberRule, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (!meetsRule(rule, value))
    throw invalid(isolateText.optionInvalid(option, optionRuleText.number(rule), describeValue(value)));
  return value;
}

function groupOf(option: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(isolateText.optionInvalid(option, optionRuleText.group, describeValue(value)));
  }
  return { ...value };
}

function cgroupPath(value: unknown): string | null {
  if (value === undefined) return null;
  if (!isCgroupPath(value)) {
    throw invalid(isolateText.optionInvalid('pool.cgroup', optionRuleText.cgroupPath, describeValue(value)));
  }
  return value;
}

function resolveLimits(value: unknown): IsolateLimits {
  const limits = groupOf('limits', value);
  rejectUnknown(limits, LIMITS_LEVEL, 'limits.');
  const resolved = {} as IsolateLimits;
  for (const name of LIMITS_LEVEL)
    resolved[name] = number(`limits.${name}`, LIMIT_NUMBERS[name], limits[name], DEFAULT_LIMITS[name]);
  return resolved;
}

type PoolNumber = keyof typeof POOL_NUMBERS;

export function resolveSettings(options: unknown): IsolateSettings {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(isolateText.optionsNotObject(describeValue(options)));
  }
  const top = options as IsolateExecutorOptions;
  rejectUnknown(top, TOP_LEVEL, '');
  const timeout = number('timeout', TOP_NUMBERS.timeout, top.timeout, DEFAULT_TIMEOUT_MS);
  const maxTimeout = number('maxTimeout', TOP_NUMBERS.maxTimeout, top.maxTimeout, defaultMaxTimeout(timeout));
  const timeoutBreach = timeoutAboveMax(timeout, maxTimeout);
  if (timeoutBreach !== null)
    throw invalid(isolateText.optionTimeoutAboveMax(timeoutBreach.timeout, timeoutBreach.maxTimeout));
  const outbound = top.outbound;
  if (outbound !== undefined && outbound !== null && typeof outbound !== 'function') {
    throw invalid(isolateText.optionInvalid('outbound', optionRuleText.outbound, describeValue(outbound)));
  }
  const cpuTimeout =
    top.cpuTimeout === undefined ? null : number('cpuTimeout', TOP_NUMBERS.cpuTimeout, top.cpuTimeout, 0);
  const pool: IsolatePoolOptions = groupOf('pool', top.pool);
  rejectUnknown(pool, POOL_LEVEL, 'pool.');
  const poolNumber = (name: PoolNumber, fallback: number) =>
    number(`pool.${name}`, POOL_NUMBERS[name], pool[name], fallback);
  const memoryLimitMb = poolNumber('memoryLimitMb', DEFAULT_POOL.memoryLimitMb);
  const memoryBudgetMb = poolNumber('memoryBudgetMb', defaultMemoryBudgetMb());
  const maxWorkers = poolNumber('maxWorkers', maxWorkersOrDefault({ memoryBudgetMb }));
  const minWorkers = poolNumber('minWorkers', DEFAULT_POOL.minWorkers);
  const workersBreach = minWorkersAboveMax({ minWorkers, maxWorkers });
  if (workersBreach !== null)
    throw invalid(isolateText.optionMinAboveMax(workersBreach.minWorkers, workersBreach.maxWorkers));
  const confinement = top.confinement ?? DEFAULT_CONFINEMENT;
  if (!(CONFINEMENT_OPTIONS as readonly unknown[]).includes(confinement)) {
    const valid = optionRuleText.oneOf(CONFINEMENT_OPTIONS.map((mode) => `'${mode}'`));
    throw invalid(isolateText.optionInvalid('confinement', valid, describeValue(confinement)));
  }
  return {
    timeout,
    maxTimeout,
    cpuTimeout,
    outbound: outbound ?? null,
    maxWorkers,
    minWorkers,
    spare: poolNumber('spare', DEFAULT_POOL.spare),
    idleTimeoutMs: poolNumber('idleTimeoutMs', DEFAULT_POOL.idleTimeoutMs),
    maxStarting: poolNumber('maxStarting', defaultMaxStarting()),
    maxQueue: poolNumber('maxQueue', DEFAULT_POOL.maxQueue),
    recycleAfterRuns: poolNumber('recycleAfterRuns', DEFAULT_POOL.recycleAfterRuns),
    maxRssMb: poolNumber('maxRssMb', DEFAULT_POOL.maxRssMb),
    heapLimitMb: poolNumber('heapLimitMb', DEFAULT_POOL.heapLimitMb),
    memoryLimitMb,
    memoryBudgetMb,
    cgroup: cgroupPath(pool.cgroup),
    maxRetained: poolNumber('maxRetained', DEFAULT_POOL.maxRetained),
    retainedIdleTimeoutMs: poolNumber('retainedIdleTimeoutMs', DEFAULT_POOL.retainedIdleTimeoutMs),
    maxNestedRuns: poolNumber('maxNestedRuns', DEFAULT_POOL.maxNestedRuns),
    limits: resolveLimits(top.limits),
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
    confinement,
  };
}
