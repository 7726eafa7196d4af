/**
 * The one parse every entry point's options go through: an unknown option (with the nearest name)
 * is said before a wrong value, a wrong value is said with its row's rule, a missing one takes its
 * row's default, and the rows read back from the schema are the rows declared in it.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  functionValue,
  type OptionTexts,
  option,
  optionsSchema,
  parseOptions,
  requiredOption,
  rowsOf,
} from '../../src/protocol/parse-options.js';

const SIZE_ROW = {
  type: 'integer',
  unit: 'bytes',
  bounds: { kind: 'integer', min: 1 },
  default: 64,
  rule: 'a positive integer',
  description: 'a size',
} as const;
const NAME_ROW = { type: 'string', rule: 'a string', description: 'a name' } as const;
const HOOK_ROW = { type: 'function', rule: 'a function', description: 'a hook' } as const;

const SCHEMA = optionsSchema({
  name: requiredOption(v.string(), NAME_ROW),
  maxSizeBytes: option(v.number(), SIZE_ROW),
  onDone: option(functionValue<() => void>(), HOOK_ROW),
});
const NO_ARRAYS = optionsSchema({ maxSizeBytes: option(v.number(), SIZE_ROW) }, { arrays: false });

const TEXTS: OptionTexts = {
  notObject: (value) => `not an object: ${String(value)}`,
  unknown: (name, known, nearest) => `unknown ${name} (nearest ${nearest}) of ${known.join('/')}`,
  invalid: (name, rule, value) => `${name} must be ${rule}, got ${String(value)}`,
};

function refusal(schema: typeof SCHEMA | typeof NO_ARRAYS, value: unknown): string {
  try {
    parseOptions(schema, value, TEXTS, (text) => new RangeError(text));
  } catch (error) {
    expect(error).toBeInstanceOf(RangeError);
    return (error as Error).message;
  }
  throw new Error('parsed; a refusal was expected');
}

describe('parseOptions', () => {
  it('gives each option its row default, and keeps what was given', () => {
    expect(parseOptions(SCHEMA, { name: 'a' }, TEXTS, Error)).toEqual({ name: 'a', maxSizeBytes: 64 });
    expect(parseOptions(SCHEMA, { name: 'a', maxSizeBytes: undefined }, TEXTS, Error).maxSizeBytes).toBe(64);
    expect(parseOptions(SCHEMA, { name: 'a', maxSizeBytes: 9 }, TEXTS, Error).maxSizeBytes).toBe(9);
  });

  it('refuses a value its row bounds refuse, with the row rule and the value', () => {
    expect(refusal(SCHEMA, { name: 'a', maxSizeBytes: 0 })).toBe('maxSizeBytes must be a positive integer, got 0');
    expect(refusal(SCHEMA, { name: 'a', maxSizeBytes: 1.5 })).toBe('maxSizeBytes must be a positive integer, got 1.5');
    expect(refusal(SCHEMA, { name: 'a', maxSizeBytes: '9' })).toBe('maxSizeBytes must be a positive integer, got 9');
    expect(refusal(SCHEMA, { name: 'a', onDone: 1 })).toBe('onDone must be a function, got 1');
    expect(refusal(SCHEMA, {})).toBe('name must be a string, got undefined');
  });

  it('says an unknown option before a wrong value, with the nearest name and every name in row order', () => {
    expect(refusal(SCHEMA, { name: 1, maxSizeByte: 3 })).toBe(
      'unknown maxSizeByte (nearest maxSizeBytes) of name/maxSizeBytes/onDone',
    );
  });

  it('says options that are not an object are not, and an array only where the entry point refuses one', () => {
    expect(refusal(SCHEMA, 3)).toBe('not an object: 3');
    expect(refusal(SCHEMA, null)).toBe('not an object: null');
    expect(refusal(NO_ARRAYS, [])).toBe('not an object: ');
    expect(parseOptions(optionsSchema({}), [], TEXTS, Error)).toEqual({});
  });

  it('reads the rows back from the schema', () => {
    expect(rowsOf(SCHEMA)).toEqual({ name: NAME_ROW, maxSizeBytes: SIZE_ROW, onDone: HOOK_ROW });
    expect(Object.keys(rowsOf(SCHEMA))).toEqual(['name', 'maxSizeBytes', 'onDone']);
  });
});
