/**
 * The rows of `IsolateExecutor`'s option schema (schema.ts), read back by group, and the views
 * derived from them: each number option's rule, the plain defaults, the caps' maxima. The daemon's
 * `--help` and command line (src/server/command/, through the `/isolate` entry) and the docs tables
 * (scripts/option-tables.ts, checked by test/isolate/host/options/option-docs.test.ts) read them.
 */
import type { NumberBounds } from '../../../protocol/option-schema.js';
import { rowsOf } from '../../../protocol/parse-options.js';
import { LIMIT_SCHEMA } from './limit-options.js';
import type { IsolateOptionRow, NumberRule } from './option-row.js';
import { POOL_SCHEMA } from './pool-options.js';
import { ISOLATE_SCHEMA } from './schema.js';
import type { IsolateLimits } from './types.js';

export type { IsolateOptionRow, NumberRule } from './option-row.js';
export {
  DEFAULT_CONFINEMENT,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TURN_GRACE_MS,
} from './schema.js';

/** Generous: on a loaded 2-core box a spawn that normally takes 40 ms can take seconds. */
export const STARTUP_TIMEOUT_MS = 20_000;

/** The top-level options, in the order a refusal lists them (the daemon's Sandbox flags among them). */
export const TOP_ROWS = rowsOf(ISOLATE_SCHEMA);
/** The pool's options, in the order a refusal and --help list them. */
export const POOL_ROWS = rowsOf(POOL_SCHEMA);
/** The size caps, in the order a refusal and --help list them. */
export const LIMIT_ROWS = rowsOf(LIMIT_SCHEMA);

/**
 * Every option's row by group: what the daemon's command line (through the `/isolate` entry) and
 * the docs tables are derived from.
 */
export const ISOLATE_OPTION_ROWS = { top: TOP_ROWS, pool: POOL_ROWS, limits: LIMIT_ROWS } as const;

// --- views derived from the rows --------------------------------------------------------------

type NumberRowsOf<Rows> = { [K in keyof Rows as Rows[K] extends { bounds: NumberBounds } ? K : never]: Rows[K] };
type RuleOf<Row> = Row extends { bounds: infer Bounds; flag: infer Flag }
  ? Bounds & { flag: Flag }
  : Row extends { bounds: infer Bounds }
    ? Bounds
    : never;
type RulesOf<Rows> = { readonly [K in keyof NumberRowsOf<Rows>]: RuleOf<Rows[K]> };

function rulesOf<Rows extends Record<string, IsolateOptionRow>>(rows: Rows): RulesOf<Rows> {
  const rules: Record<string, NumberRule> = {};
  for (const [name, row] of Object.entries(rows)) {
    if (row.bounds !== undefined) rules[name] = row.flag === undefined ? row.bounds : { ...row.bounds, flag: row.flag };
  }
  return rules as RulesOf<Rows>;
}

type DefaultsOf<Rows> = {
  readonly [K in keyof Rows as Rows[K] extends { bounds: NumberBounds; default: number } ? K : never]: number;
};

function defaultsOf<Rows extends Record<string, IsolateOptionRow>>(rows: Rows): DefaultsOf<Rows> {
  const defaults: Record<string, number> = {};
  for (const [name, row] of Object.entries(rows)) if (typeof row.default === 'number') defaults[name] = row.default;
  return Object.freeze(defaults) as DefaultsOf<Rows>;
}

/** The top-level number options' rules. */
export const TOP_NUMBERS = rulesOf({
  timeout: TOP_ROWS.timeout,
  maxTimeout: TOP_ROWS.maxTimeout,
  cpuTimeout: TOP_ROWS.cpuTimeout,
  turnGraceMs: TOP_ROWS.turnGraceMs,
});
/** The pool's number options' rules, in the order the daemon's --help lists those with a flag. */
export const POOL_NUMBERS = rulesOf(POOL_ROWS);
/** Each size cap's rule: an integer from 1 to its maximum, and its daemon flag. */
export const LIMIT_NUMBERS = rulesOf(LIMIT_ROWS);

/** What each pool number option does (`IsolateOptionRow.role`). */
export const POOL_NUMBER_ROLES = Object.fromEntries(
  Object.entries(POOL_ROWS).flatMap(([name, row]) => ('role' in row ? [[name, row.role]] : [])),
) as Record<keyof typeof POOL_NUMBERS, 'limit' | 'sizing'>;

/** The pool options whose defaults are plain numbers (`memoryBudgetMb`, `maxWorkers` and `maxStarting` depend on the host). */
export const DEFAULT_POOL = defaultsOf(POOL_ROWS);
export const DEFAULT_LIMITS: Readonly<IsolateLimits> = defaultsOf(LIMIT_ROWS);
/** The largest value each size cap takes. */
export const LIMIT_MAXIMA: Readonly<IsolateLimits> = Object.freeze(
  Object.fromEntries(Object.entries(LIMIT_ROWS).map(([name, row]) => [name, row.bounds.max])) as IsolateLimits,
);

/** The pool's string option: `pool.cgroup`, and its daemon flag. */
export const CGROUP_FLAG = POOL_ROWS.cgroup.flag;
