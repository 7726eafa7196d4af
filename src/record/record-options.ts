/**
 * The options of a recorded execution (`record: true | {maxBytes?, onRecord?}`), one row each
 * (src/protocol/option-schema.ts), checked before the run starts so a wrong one costs no sandbox.
 */
import { describeValue } from '../protocol/describe-value.js';
import { ExecutorError } from '../protocol/errors.js';
import { meetsBounds, nearestOption, type OptionRow } from '../protocol/option-schema.js';
import { formatRecordOptionInvalid, formatRecordOptionUnknown, formatRecordValueInvalid } from './texts.js';
import type { RecordOptions, RunRecord } from './types.js';

/** The default bound on what a run adds to its record: 1 MiB of JSON. */
export const DEFAULT_MAX_RECORD_BYTES = 2 ** 20;

export const RECORD_ROWS = {
  maxBytes: {
    type: 'integer',
    unit: 'bytes',
    bounds: { kind: 'integer', min: 1 },
    default: DEFAULT_MAX_RECORD_BYTES,
    rule: 'a positive integer number of bytes, or undefined (1 MiB)',
    description:
      "the most bytes of JSON the run adds to its record (calls, console lines, the outcome's value); past it the record is cut, and says so",
  },
  onRecord: {
    type: 'function',
    rule: 'a function (record) => void, or undefined',
    description: 'receives every finished record, that of a run whose `execute` rejected included',
  },
} as const satisfies Record<keyof RecordOptions, OptionRow>;

const OPTION_NAMES = Object.keys(RECORD_ROWS);

/** Record options with their defaults. */
export interface ResolvedRecordOptions {
  maxBytes: number;
  onRecord: ((record: RunRecord) => void) | undefined;
}

function invalid(text: string): ExecutorError {
  return new ExecutorError('INVALID_REQUEST', text);
}

/**
 * `record`'s value, checked: `null` when nothing is recorded (`undefined`, `false`), else the
 * options with their defaults. Throws `ExecutorError` `INVALID_REQUEST` naming what was wrong.
 */
export function resolveRecordOptions(value: unknown): ResolvedRecordOptions | null {
  if (value === undefined || value === false) return null;
  if (value === true) return { maxBytes: DEFAULT_MAX_RECORD_BYTES, onRecord: undefined };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(formatRecordValueInvalid(describeValue(value)));
  for (const name of Object.keys(value)) {
    if (!OPTION_NAMES.includes(name))
      throw invalid(formatRecordOptionUnknown(name, OPTION_NAMES, nearestOption(name, OPTION_NAMES)));
  }
  const { maxBytes, onRecord } = value as RecordOptions;
  if (maxBytes !== undefined && !meetsBounds(RECORD_ROWS.maxBytes.bounds, maxBytes))
    throw invalid(formatRecordOptionInvalid('maxBytes', RECORD_ROWS.maxBytes.rule, describeValue(maxBytes)));
  if (onRecord !== undefined && typeof onRecord !== 'function')
    throw invalid(formatRecordOptionInvalid('onRecord', RECORD_ROWS.onRecord.rule, describeValue(onRecord)));
  return { maxBytes: maxBytes ?? DEFAULT_MAX_RECORD_BYTES, onRecord };
}
