/**
 * The options of `new CodemodeExecutor(native, options)`: one row each (src/protocol/option-schema.ts),
 * whose rule texts the constructor refuses with, and an unknown one refused with the nearest name.
 * Runtime-neutral, as the root entry is.
 */
import { DEFAULT_MAX_CODE_BYTES } from '../protocol/code-size.js';
import { describeValue } from '../protocol/describe-value.js';
import { meetsBounds, nearestOption, type OptionRow } from '../protocol/option-schema.js';
import { DEFAULT_NORMALIZE_CACHE_CHARS } from './normalized-code.js';
import { formatConstructorOptionInvalid, formatConstructorOptionUnknown } from './texts.js';

/** What `new CodemodeExecutor(native, options?)` takes beside the native executor. */
export interface CodemodeExecutorOptions {
  /**
   * The largest code `execute` takes, in UTF-8 bytes, counted before normalization parses it (a
   * parse of megabytes stalls the host). Default 15 MiB, as the native `limits.maxCodeBytes`.
   */
  maxCodeBytes?: number | undefined;
  /**
   * How many characters of code, with its normalized form, the executor remembers so that a
   * program sent again is not parsed again (least recently used first out). Default 1 Mi
   * characters; 0 turns the memory off.
   */
  normalizeCacheChars?: number | undefined;
  /**
   * Who this executor's runs are for (the native request's `tenant`), unless a call names another:
   * at `IsolateExecutor`'s tenant level (`pool.runsPerMember`) runs of one tenant may share a
   * process, each in its own isolate, and runs of different tenants never do. Default: none.
   */
  tenant?: string | undefined;
}

export const CODEMODE_ROWS = {
  maxCodeBytes: {
    type: 'integer',
    unit: 'bytes',
    bounds: { kind: 'integer', min: 1 },
    default: DEFAULT_MAX_CODE_BYTES,
    rule: 'a positive integer number of bytes, or undefined (15 MiB)',
    description:
      "the largest code `execute` takes, in UTF-8 bytes, counted before normalization parses it; the same default as `IsolateExecutor`'s `limits.maxCodeBytes`",
  },
  normalizeCacheChars: {
    type: 'integer',
    unit: 'chars',
    bounds: { kind: 'integer', min: 0 },
    default: DEFAULT_NORMALIZE_CACHE_CHARS,
    rule: 'a whole number of characters, 0 to remember none, or undefined (1 Mi)',
    description: 'how many characters of code, with its normalized form, the executor remembers; 0 turns it off',
  },
  tenant: {
    type: 'string',
    rule: 'a non-empty string, or undefined (none)',
    description:
      "who the executor's runs are for (the native request's `tenant`), unless a call's `tenant` names another; at `IsolateExecutor`'s tenant level (`pool.runsPerMember`) runs of one tenant may share a process, each in its own isolate",
  },
} as const satisfies Record<keyof CodemodeExecutorOptions, OptionRow>;

const OPTION_NAMES = Object.keys(CODEMODE_ROWS);

/** One option against its row: an integer from the row's least; its default when undefined. */
function integer(name: 'maxCodeBytes' | 'normalizeCacheChars', value: unknown): number {
  const row = CODEMODE_ROWS[name];
  if (value === undefined) return row.default;
  if (!meetsBounds(row.bounds, value)) {
    throw new TypeError(formatConstructorOptionInvalid(name, row.rule, describeValue(value)));
  }
  return value;
}

/** The constructor's options, checked against their rows, with their defaults. */
export function resolveCodemodeOptions(
  options: CodemodeExecutorOptions | undefined,
): Required<{ [K in Exclude<keyof CodemodeExecutorOptions, 'tenant'>]: number }> & { tenant: string | undefined } {
  if (typeof options === 'object' && options !== null) {
    for (const name of Object.keys(options)) {
      if (!OPTION_NAMES.includes(name))
        throw new TypeError(formatConstructorOptionUnknown(name, OPTION_NAMES, nearestOption(name, OPTION_NAMES)));
    }
  }
  return {
    maxCodeBytes: integer('maxCodeBytes', options?.maxCodeBytes),
    normalizeCacheChars: integer('normalizeCacheChars', options?.normalizeCacheChars),
    tenant: tenantOption(options?.tenant),
  };
}

/** The `tenant` option: a non-empty string, or undefined. */
function tenantOption(value: unknown): string | undefined {
  if (value === undefined || (typeof value === 'string' && value !== '')) return value;
  throw new TypeError(formatConstructorOptionInvalid('tenant', CODEMODE_ROWS.tenant.rule, describeValue(value)));
}
