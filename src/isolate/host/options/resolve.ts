/**
 * The constructor's checks: one parse of the options by their schema (schema.ts), then the rules
 * between options (rules.ts) and the defaults the host sets (host-sizing.ts). A refusal names the
 * option a value broke; an unknown one gets the nearest name, a renamed one is taken under its old
 * name with a warning.
 */
import { describeValue } from '../../../protocol/describe-value.js';
import { invalidRequest } from '../../../protocol/errors.js';
import { takeRenamed } from '../../../protocol/option-schema.js';
import { type OptionTexts, parseOptions } from '../../../protocol/parse-options.js';
import { isolateText } from '../../host/texts.js';
import { defaultMaxStarting, defaultMemoryBudgetMb } from './host-sizing.js';
import { defaultMaxTimeout, maxWorkersOrDefault, minWorkersAboveMax, timeoutAboveMax } from './rules.js';
import { ISOLATE_SCHEMA } from './schema.js';
import { LIMIT_ROWS, POOL_ROWS, STARTUP_TIMEOUT_MS, TOP_ROWS } from './table.js';
import type { IsolateSettings } from './types.js';

/** How a renamed option's warning names this entry point. */
const ENTRY = 'IsolateExecutor';

const ISOLATE_TEXTS: OptionTexts = {
  notObject: (value) => isolateText.optionsNotObject(describeValue(value)),
  unknown: (name, known, nearest) => isolateText.optionUnknown(name, known.join(', '), nearest),
  invalid: (name, rule, value) => isolateText.optionInvalid(name, rule, describeValue(value)),
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The options with each renamed one, at the top and in each group, moved to its new name. */
function renamedTaken(options: unknown): unknown {
  const top = takeRenamed(ENTRY, options, TOP_ROWS);
  if (!isRecord(top)) return top;
  const pool = takeRenamed(ENTRY, top.pool, POOL_ROWS, 'pool.');
  const limits = takeRenamed(ENTRY, top.limits, LIMIT_ROWS, 'limits.');
  return pool === top.pool && limits === top.limits ? top : { ...top, pool, limits };
}

export function resolveSettings(options: unknown): IsolateSettings {
  const given = parseOptions(ISOLATE_SCHEMA, renamedTaken(options ?? {}), ISOLATE_TEXTS, invalidRequest);
  const { pool } = given;
  const maxTimeout = given.maxTimeout ?? defaultMaxTimeout(given.timeout ?? undefined);
  // A null default asks for the maximum, as a request's null does.
  const timeout = given.timeout ?? maxTimeout;
  const timeoutBreach = timeoutAboveMax(timeout, maxTimeout);
  if (timeoutBreach !== null)
    throw invalidRequest(isolateText.optionTimeoutAboveMax(timeoutBreach.timeout, timeoutBreach.maxTimeout));
  const memoryBudgetMb = pool.memoryBudgetMb ?? defaultMemoryBudgetMb();
  const maxWorkers = maxWorkersOrDefault({ maxWorkers: pool.maxWorkers, memoryBudgetMb });
  const workersBreach = minWorkersAboveMax({ minWorkers: pool.minWorkers, maxWorkers });
  if (workersBreach !== null)
    throw invalidRequest(isolateText.optionMinAboveMax(workersBreach.minWorkers, workersBreach.maxWorkers));
  return {
    ...pool,
    timeout,
    maxTimeout,
    cpuTimeout: given.cpuTimeout ?? null,
    turnGraceMs: given.turnGraceMs,
    outbound: given.outbound ?? null,
    maxWorkers,
    memoryBudgetMb,
    maxStarting: pool.maxStarting ?? defaultMaxStarting(),
    cgroup: pool.cgroup ?? null,
    limits: given.limits,
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
    confinement: given.confinement,
  };
}
