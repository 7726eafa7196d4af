/**
 * The constructor's checks: each option against its row in the option schema (table.ts) and the
 * rules between options (rules.ts), refused with a text that names the option a value broke; an
 * unknown one gets the nearest name, a renamed one is taken under its old name with a warning.
 */
import { describeValue } from '../../../protocol/describe-value.js';
import { invalidRequest } from '../../../protocol/errors.js';
import { meetsBounds, nearestOption, takeRenamed } from '../../../protocol/option-schema.js';
import { isolateText } from '../../host/texts.js';
import { CONFINEMENT_OPTIONS } from '../confinement/detect.js';
import { defaultMaxStarting, defaultMemoryBudgetMb } from './host-sizing.js';
import { defaultMaxTimeout, isCgroupPath, maxWorkersOrDefault, minWorkersAboveMax, timeoutAboveMax } from './rules.js';
import {
  DEFAULT_CONFINEMENT,
  DEFAULT_LIMITS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TURN_GRACE_MS,
  type IsolateOptionRow,
  LIMIT_ROWS,
  type POOL_NUMBERS,
  POOL_ROWS,
  STARTUP_TIMEOUT_MS,
  TOP_ROWS,
} from './table.js';
import type { IsolateExecutorOptions, IsolateLimits, IsolatePoolOptions, IsolateSettings } from './types.js';

/** Each group's option names, from its rows: in the order a refusal lists them. */
const TOP_LEVEL = Object.keys(TOP_ROWS) as (keyof IsolateExecutorOptions)[];
const POOL_LEVEL = Object.keys(POOL_ROWS) as (keyof IsolatePoolOptions)[];
const LIMITS_LEVEL = Object.keys(LIMIT_ROWS) as (keyof IsolateLimits)[];

/** How a renamed option's warning names this entry point. */
const ENTRY = 'IsolateExecutor';

function rejectUnknown(record: object, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      const names = known.map((name) => `${prefix}${name}`);
      throw invalidRequest(
        isolateText.optionUnknown(`${prefix}${key}`, names.join(', '), nearestOption(`${prefix}${key}`, names)),
      );
    }
  }
}

/** The value, checked against its row; `fallback` when undefined. */
function number(option: string, row: IsolateOptionRow, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (row.bounds === undefined || !meetsBounds(row.bounds, value))
    throw invalidRequest(isolateText.optionInvalid(option, row.rule, describeValue(value)));
  return value;
}

function groupOf(option: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidRequest(isolateText.optionInvalid(option, TOP_ROWS.pool.rule, describeValue(value)));
  }
  return { ...value };
}

function cgroupPath(value: unknown): string | null {
  if (value === undefined) return null;
  if (!isCgroupPath(value)) {
    throw invalidRequest(isolateText.optionInvalid('pool.cgroup', POOL_ROWS.cgroup.rule, describeValue(value)));
  }
  return value;
}

function resolveLimits(value: unknown): IsolateLimits {
  const limits = takeRenamed(ENTRY, groupOf('limits', value), LIMIT_ROWS, 'limits.');
  rejectUnknown(limits, LIMITS_LEVEL, 'limits.');
  const resolved = {} as IsolateLimits;
  for (const name of LIMITS_LEVEL)
    resolved[name] = number(`limits.${name}`, LIMIT_ROWS[name], limits[name], DEFAULT_LIMITS[name]);
  return resolved;
}

type PoolNumber = keyof typeof POOL_NUMBERS;

export function resolveSettings(options: unknown): IsolateSettings {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidRequest(isolateText.optionsNotObject(describeValue(options)));
  }
  const top = takeRenamed(ENTRY, options as IsolateExecutorOptions, TOP_ROWS);
  rejectUnknown(top, TOP_LEVEL, '');
  const timeout = number('timeout', TOP_ROWS.timeout, top.timeout, DEFAULT_TIMEOUT_MS);
  const maxTimeout = number('maxTimeout', TOP_ROWS.maxTimeout, top.maxTimeout, defaultMaxTimeout(timeout));
  const timeoutBreach = timeoutAboveMax(timeout, maxTimeout);
  if (timeoutBreach !== null)
    throw invalidRequest(isolateText.optionTimeoutAboveMax(timeoutBreach.timeout, timeoutBreach.maxTimeout));
  const outbound = top.outbound;
  if (outbound !== undefined && outbound !== null && typeof outbound !== 'function') {
    throw invalidRequest(isolateText.optionInvalid('outbound', TOP_ROWS.outbound.rule, describeValue(outbound)));
  }
  const cpuTimeout = top.cpuTimeout === undefined ? null : number('cpuTimeout', TOP_ROWS.cpuTimeout, top.cpuTimeout, 0);
  const pool: IsolatePoolOptions = takeRenamed(ENTRY, groupOf('pool', top.pool), POOL_ROWS, 'pool.');
  rejectUnknown(pool, POOL_LEVEL, 'pool.');
  const poolNumber = (name: PoolNumber, fallback: number) =>
    number(`pool.${name}`, POOL_ROWS[name], pool[name], fallback);
  const memoryLimitMb = poolNumber('memoryLimitMb', DEFAULT_POOL.memoryLimitMb);
  const memoryBudgetMb = poolNumber('memoryBudgetMb', defaultMemoryBudgetMb());
  const maxWorkers = poolNumber('maxWorkers', maxWorkersOrDefault({ memoryBudgetMb }));
  const minWorkers = poolNumber('minWorkers', DEFAULT_POOL.minWorkers);
  const workersBreach = minWorkersAboveMax({ minWorkers, maxWorkers });
  if (workersBreach !== null)
    throw invalidRequest(isolateText.optionMinAboveMax(workersBreach.minWorkers, workersBreach.maxWorkers));
  const confinement = top.confinement ?? DEFAULT_CONFINEMENT;
  if (!(CONFINEMENT_OPTIONS as readonly unknown[]).includes(confinement)) {
    throw invalidRequest(
      isolateText.optionInvalid('confinement', TOP_ROWS.confinement.rule, describeValue(confinement)),
    );
  }
  return {
    timeout,
    maxTimeout,
    cpuTimeout,
    turnGraceMs: number('turnGraceMs', TOP_ROWS.turnGraceMs, top.turnGraceMs, DEFAULT_TURN_GRACE_MS),
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
    runsPerMember: poolNumber('runsPerMember', DEFAULT_POOL.runsPerMember),
    programStartTimeoutMs: poolNumber('programStartTimeoutMs', DEFAULT_POOL.programStartTimeoutMs),
    limits: resolveLimits(top.limits),
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
    confinement,
  };
}
