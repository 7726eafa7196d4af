/**
 * The options of `new CodemodeExecutor(native, options)`: one row each (src/protocol/option-schema.ts),
 * whose rule texts the constructor refuses with, and an unknown one refused with the nearest name.
 * Runtime-neutral, as the root entry is.
 */
import * as v from 'valibot';
import { DEFAULT_MAX_CODE_BYTES } from '../protocol/code-size.js';
import { describeValue } from '../protocol/describe-value.js';
import { type OptionTexts, option, optionsSchema, parseOptions, rowsOf } from '../protocol/parse-options.js';
import { REQUEST_FIELDS } from '../protocol/request-schema.js';
import { DEFAULT_NORMALIZE_CACHE_CHARS } from './normalized-code.js';
import { formatConstructorOptionInvalid, formatConstructorOptionUnknown } from './texts.js';

const CODEMODE_SCHEMA = optionsSchema({
  /**
   * The largest code `execute` takes, in UTF-8 bytes, counted before normalization parses it (a
   * parse of megabytes stalls the host). Default 15 MiB, as the native `limits.maxCodeBytes`.
   */
  maxCodeBytes: option(v.number(), {
    type: 'integer',
    unit: 'bytes',
    bounds: { kind: 'integer', min: 1 },
    default: DEFAULT_MAX_CODE_BYTES,
    rule: 'a positive integer number of bytes, or undefined (15 MiB)',
    description:
      "the largest code `execute` takes, in UTF-8 bytes, counted before normalization parses it; the same default as `IsolateExecutor`'s `limits.maxCodeBytes`",
  }),
  /**
   * How many characters of code, with its normalized form, the executor remembers so that a
   * program sent again is not parsed again (least recently used first out). Default 1 Mi
   * characters; 0 turns the memory off.
   */
  normalizeCacheChars: option(v.number(), {
    type: 'integer',
    unit: 'chars',
    bounds: { kind: 'integer', min: 0 },
    default: DEFAULT_NORMALIZE_CACHE_CHARS,
    rule: 'a whole number of characters, 0 to remember none, or undefined (1 Mi)',
    description: 'how many characters of code, with its normalized form, the executor remembers; 0 turns it off',
  }),
  /**
   * Who this executor's runs are for (the native request's `tenant`), unless a call names another:
   * at `IsolateExecutor`'s tenant level (`pool.runsPerMember`) runs of one tenant may share a
   * process, each in its own isolate, and runs of different tenants never do. Default: none.
   */
  tenant: option(REQUEST_FIELDS.tenant, {
    type: 'string',
    default: null,
    rule: 'a non-empty string, or undefined (none)',
    description:
      "who the executor's runs are for (the native request's `tenant`), unless a call's `tenant` names another; at `IsolateExecutor`'s tenant level (`pool.runsPerMember`) runs of one tenant may share a process, each in its own isolate",
  }),
});

/** What `new CodemodeExecutor(native, options?)` takes beside the native executor. */
export type CodemodeExecutorOptions = v.InferInput<typeof CODEMODE_SCHEMA>;

export const CODEMODE_ROWS = rowsOf(CODEMODE_SCHEMA);

const CODEMODE_TEXTS: OptionTexts = {
  // Not reached: anything but an object stands for no options (below), as it always has.
  notObject: (value) => formatConstructorOptionInvalid('', 'an object', describeValue(value)),
  unknown: formatConstructorOptionUnknown,
  invalid: (name, rule, value) => formatConstructorOptionInvalid(name, rule, describeValue(value)),
};

/** The constructor's options, parsed by their schema, with their defaults. */
export function resolveCodemodeOptions(options: CodemodeExecutorOptions | undefined) {
  const given = typeof options === 'object' && options !== null ? options : {};
  return parseOptions(CODEMODE_SCHEMA, given, CODEMODE_TEXTS, (text) => new TypeError(text));
}
