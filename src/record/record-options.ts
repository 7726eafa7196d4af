/**
 * The options of a recorded execution (`record: true | {maxBytes?, onRecord?}`), one row each
 * (src/protocol/option-schema.ts), checked before the run starts so a wrong one costs no sandbox.
 */
import * as v from 'valibot';
import { describeValue } from '../protocol/describe-value.js';
import { invalidRequest } from '../protocol/errors.js';
import {
  functionValue,
  type OptionTexts,
  option,
  optionsSchema,
  parseOptions,
  rowsOf,
} from '../protocol/parse-options.js';
import { formatRecordOptionInvalid, formatRecordOptionUnknown, formatRecordValueInvalid } from './texts.js';
import type { RunRecord } from './types.js';

/** The default bound on what a run adds to its record: 1 MiB of JSON. */
export const DEFAULT_MAX_RECORD_BYTES = 2 ** 20;

const RECORD_SCHEMA = optionsSchema(
  {
    /**
     * The most bytes of JSON the run may add to the record (its calls, console lines and outcome
     * value); the request part (code, providers, modules) is the host's own and is kept whole.
     */
    maxBytes: option(v.number(), {
      type: 'integer',
      unit: 'bytes',
      bounds: { kind: 'integer', min: 1 },
      default: DEFAULT_MAX_RECORD_BYTES,
      rule: 'a positive integer number of bytes, or undefined (1 MiB)',
      description:
        "the most bytes of JSON the run adds to its record (calls, console lines, the outcome's value); past it the record is cut, and says so",
    }),
    /** Receives every finished record, that of a run whose `execute` rejected included. */
    onRecord: option(functionValue<(record: RunRecord) => void>(), {
      type: 'function',
      rule: 'a function (record) => void, or undefined',
      description: 'receives every finished record, that of a run whose `execute` rejected included',
    }),
  },
  { arrays: false },
);

/** What `record: {...}` takes (`record: true` is all of them at their defaults). */
export type RecordOptions = v.InferInput<typeof RECORD_SCHEMA>;

export const RECORD_ROWS = rowsOf(RECORD_SCHEMA);

/** Record options with their defaults. */
export type ResolvedRecordOptions = v.InferOutput<typeof RECORD_SCHEMA>;

const RECORD_TEXTS: OptionTexts = {
  notObject: (value) => formatRecordValueInvalid(describeValue(value)),
  unknown: formatRecordOptionUnknown,
  invalid: (name, rule, value) => formatRecordOptionInvalid(name, rule, describeValue(value)),
};

const ALL_DEFAULTS: ResolvedRecordOptions = Object.freeze({ maxBytes: DEFAULT_MAX_RECORD_BYTES });

/**
 * `record`'s value, checked: `null` when nothing is recorded (`undefined`, `false`), else the
 * options with their defaults. Throws `ExecutorError` `INVALID_REQUEST` naming what was wrong.
 */
export function resolveRecordOptions(value: unknown): ResolvedRecordOptions | null {
  if (value === undefined || value === false) return null;
  if (value === true) return ALL_DEFAULTS;
  return parseOptions(RECORD_SCHEMA, value, RECORD_TEXTS, invalidRequest);
}
