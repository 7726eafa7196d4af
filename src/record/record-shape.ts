/**
 * What `replay` checks of a record read back from storage, field by field, before anything runs:
 * schema/run-record.schema.json as code. A record is the host's data, possibly edited or damaged,
 * so every field is checked and the first wrong one is named by its path (`calls[2].args`), rather
 * than surfacing later as a `TypeError` or a `RangeError` from deep inside the replay. The checks are
 * written out, not compiled from the schema: a Worker, which loads the root entry, allows no code
 * generation. test/record/record-shape.test.ts holds the two to the same verdicts.
 */
import { describeValue } from '../protocol/describe-value.js';
import { messageOf } from '../protocol/message-of.js';
import { RUN_RECORD_FORMAT, RUN_RECORD_SCHEMA_VERSION, type RunRecord } from './types.js';

/** A field's check: `undefined` when it holds, else what is wrong, naming the field by `path`. */
type Check = (value: unknown, path: string) => string | undefined;

interface Field {
  readonly check: Check;
  readonly required?: true;
}

function wrongType(path: string, value: unknown, wanted: string): string {
  return `${path} is ${describeValue(value)}, not ${wanted}`;
}

const string: Check = (value, path) => (typeof value === 'string' ? undefined : wrongType(path, value, 'a string'));
const boolean: Check = (value, path) => (typeof value === 'boolean' ? undefined : wrongType(path, value, 'a boolean'));
const nonNegative: Check = (value, path) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? undefined
    : wrongType(path, value, 'a number from 0');
const count: Check = (value, path) =>
  Number.isInteger(value) && (value as number) >= 0 ? undefined : wrongType(path, value, 'an integer from 0');

function constant(expected: unknown): Check {
  return (value, path) => (value === expected ? undefined : wrongType(path, value, JSON.stringify(expected)));
}

function either(wanted: string, ...checks: Check[]): Check {
  return (value, path) =>
    checks.some((check) => check(value, path) === undefined) ? undefined : wrongType(path, value, wanted);
}

/**
 * A JSON value: whatever `JSON.stringify` can write back. A value nested past what it can walk
 * (thousands of levels) is refused here, instead of throwing `RangeError` mid-replay.
 */
const jsonValue: Check = (value, path) => {
  try {
    return JSON.stringify(value) === undefined ? wrongType(path, value, 'a JSON value') : undefined;
  } catch (error) {
    return `${path} cannot be written as JSON (${messageOf(error)})`;
  }
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(fields: Readonly<Record<string, Field>>): Check {
  return (value, path) => {
    if (!isPlainObject(value)) return wrongType(path, value, 'an object');
    for (const key of Object.keys(value)) {
      if (!Object.hasOwn(fields, key)) return `${path} has a field "${key}" that a run record does not hold`;
    }
    for (const [key, field] of Object.entries(fields)) {
      const inner = `${path}.${key}`;
      if (!Object.hasOwn(value, key) || value[key] === undefined) {
        if (field.required) return `${inner} is missing`;
        continue;
      }
      const problem = field.check(value[key], inner);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

function array(item: Check): Check {
  return (value, path) => {
    if (!Array.isArray(value)) return wrongType(path, value, 'an array');
    for (let index = 0; index < value.length; index++) {
      const problem = item(value[index], `${path}[${index}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

/** A map of names to values of one kind: the request's modules. */
function record(item: Check): Check {
  return (value, path) => {
    if (!isPlainObject(value)) return wrongType(path, value, 'an object');
    for (const [key, entry] of Object.entries(value)) {
      const problem = item(entry, `${path}[${JSON.stringify(key)}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

const required = (check: Check): Field => ({ check, required: true });
const optional = (check: Check): Field => ({ check });

const moduleSource = either(
  'a module: source text, or {js}, {cjs}, {text} or {json}',
  string,
  object({ js: required(string) }),
  object({ cjs: required(string) }),
  object({ text: required(string) }),
  object({ json: required(jsonValue) }),
);

const provider = object({
  name: required(string),
  tools: required(array(string)),
  positionalArgs: optional(boolean),
  proxySource: optional(string),
  prelude: optional(string),
});

const runRecord = object({
  format: required(constant(RUN_RECORD_FORMAT)),
  schemaVersion: required(constant(RUN_RECORD_SCHEMA_VERSION)),
  request: required(
    object({
      code: required(string),
      providers: required(array(provider)),
      modules: optional(record(moduleSource)),
      timeout: optional(either('a number of milliseconds or null', nonNegative, constant(null))),
      cpuTimeout: optional(nonNegative),
      countHostWaits: optional(boolean),
    }),
  ),
  calls: required(
    array(
      object({
        provider: required(string),
        tool: required(string),
        args: required(jsonValue),
        result: optional(jsonValue),
        error: optional(string),
        rejected: optional(constant(true)),
        startMs: required(nonNegative),
        durationMs: optional(nonNegative),
      }),
    ),
  ),
  logs: required(array(object({ level: required(string), message: required(string) }))),
  outcome: required(
    object({
      result: optional(jsonValue),
      resultNotJson: optional(string),
      error: optional(string),
      rejected: optional(object({ message: required(string), code: optional(string) })),
    }),
  ),
  timing: required(object({ startedAt: required(string), wallMs: required(nonNegative) })),
  truncated: optional(
    object({
      maxBytes: required(count),
      droppedCalls: required(count),
      droppedLogs: required(count),
      droppedResult: required(boolean),
      text: required(string),
    }),
  ),
});

/** What is wrong with `value` as a run record, the first wrong field named; `undefined` when nothing is. */
export function runRecordProblem(value: unknown): string | undefined {
  return runRecord(value, 'record')?.replace(/^record\./, '');
}

/** Throws `refuse(problem)` unless `value` is a run record. */
export function assertRunRecord(value: unknown, refuse: (problem: string) => Error): asserts value is RunRecord {
  const problem = runRecordProblem(value);
  if (problem !== undefined) throw refuse(problem);
}
