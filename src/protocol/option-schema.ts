/**
 * The option schema every entry point reads: `IsolateExecutor`, the daemon's command line and
 * `createExecutorServer`, `connect()`, `openDurableState` and `CodemodeExecutor`. Each option is one
 * row (its type, unit, default, bounds, rule text, flag, environment variable and description), and
 * each entry point derives its checks, its `--help` and its docs table from its rows. Runtime-neutral:
 * the root entry, which a Worker loads, reads it too.
 */
import { nearestName } from './nearest-name.js';
import { formatRenamedOption } from './texts.js';
import { warnOnce } from './warn-once.js';

/**
 * The unit an option counts in, which its name ends with (`idleTimeoutMs`, `maxCodeBytes`,
 * `memoryLimitMb`, `tenantMemoryPercent`); a count (`maxWorkers`) and a choice carry none.
 */
export type OptionUnit = 'ms' | 'bytes' | 'mb' | 'percent' | 'chars' | 'count';

/** The suffix a name in each unit ends with, where the unit asks for one. */
export const UNIT_SUFFIXES: Readonly<Partial<Record<OptionUnit, string>>> = {
  ms: 'Ms',
  bytes: 'Bytes',
  mb: 'Mb',
  percent: 'Percent',
  chars: 'Chars',
};

/**
 * What a number option takes: an integer from `min` (to `max`, where there is one), a finite number
 * above `min` (`positive`), or a finite number from `min` (`atLeast`).
 */
export interface NumberBounds {
  readonly kind: 'integer' | 'positive' | 'atLeast';
  readonly min: number;
  readonly max?: number;
}

/** One option. */
export interface OptionRow {
  readonly type: 'integer' | 'number' | 'boolean' | 'string' | 'choice' | 'function' | 'object';
  /** For a number: the unit its name ends with (UNIT_SUFFIXES). */
  readonly unit?: OptionUnit;
  /**
   * Why the name does not end with its unit, where it does not: it is the name of a field the
   * dialect or the wire defines (`timeout`), which the option gives the default of.
   */
  readonly unitExempt?: string;
  readonly bounds?: NumberBounds;
  /** The default, where it is a plain value; undefined where there is none or the host sets it (`defaultText`). */
  readonly default?: number | string | boolean | null;
  /** The default in words, where it is not a plain value (docs, --help). */
  readonly defaultText?: string;
  /** What a value must be, as a refusal says it: `an integer >= 0`. */
  readonly rule: string;
  /** The daemon flag that sets it, without its dashes. */
  readonly flag?: string;
  /** The environment variable it is read from when its flag is not given. */
  readonly env?: string;
  /** What it does, in the docs' words (markdown). */
  readonly description: string;
  /** The option's earlier name (and flag), still taken, with a warning (takeRenamed). */
  readonly renamedFrom?: { readonly name: string; readonly flag?: string };
}

/** Whether `value` is what the bounds take. */
export function meetsBounds(bounds: NumberBounds, value: unknown): value is number {
  if (typeof value !== 'number') return false;
  if (bounds.kind === 'positive') return Number.isFinite(value) && value > bounds.min;
  if (bounds.kind === 'atLeast') return Number.isFinite(value) && value >= bounds.min;
  return Number.isSafeInteger(value) && value >= bounds.min && (bounds.max === undefined || value <= bounds.max);
}

/** The smallest integer the bounds take: what a daemon flag, which takes integers, starts from. */
export function smallestInteger(bounds: NumberBounds): number {
  if (bounds.kind === 'positive') return Math.floor(bounds.min) + 1;
  return bounds.kind === 'atLeast' ? Math.ceil(bounds.min) : bounds.min;
}

/** The known option an unknown one most likely meant, when one is near. */
export function nearestOption(name: string, known: Iterable<string>): string | undefined {
  return nearestName(name, known);
}

/**
 * The options with each renamed one moved from its old name to its new, warning once per old name
 * used (`entry` names the entry point in the warning). Where both names are given the new one wins,
 * and the warning says so. A non-object is returned as it is, for the caller's own refusal.
 */
export function takeRenamed<T>(entry: string, options: T, rows: Readonly<Record<string, OptionRow>>, prefix = ''): T {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return options;
  let taken: Record<string, unknown> | undefined;
  for (const [name, row] of Object.entries(rows)) {
    const old = row.renamedFrom?.name;
    if (old === undefined || !Object.hasOwn(options, old)) continue;
    taken ??= { ...(options as Record<string, unknown>) };
    const both = taken[name] !== undefined;
    warnOnce(formatRenamedOption(entry, `${prefix}${old}`, `${prefix}${name}`, both));
    if (!both) taken[name] = taken[old];
    delete taken[old];
  }
  return (taken ?? options) as T;
}
