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
  optionGroup,
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

const GROUP_ROW = { type: 'object', rule: 'an object', description: 'the sizes below' } as const;
const GROUPED = optionsSchema(
  {
    name: option(v.string(), NAME_ROW),
    sizes: optionGroup(NO_ARRAYS, GROUP_ROW),
  },
  { arrays: false },
);

const TEXTS: OptionTexts = {
  notObject: (value) => `not an object: ${String(value)}`,
  unknown: (name, known, nearest) => `unknown ${name} (nearest ${nearest}) of ${known.join('/')}`,
  invalid: (name, rule, value) => `${name} must be ${rule}, got ${String(value)}`,
};

function refusal(schema: Parameters<typeof parseOptions>[0], value: unknown): string {
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

  it('parses a group left out as its defaults, and names an option in a group by its path', () => {
    expect(parseOptions(GROUPED, {}, TEXTS, Error)).toEqual({ sizes: { maxSizeBytes: 64 } });
    expect(parseOptions(GROUPED, { sizes: { maxSizeBytes: 9 } }, TEXTS, Error).sizes.maxSizeBytes).toBe(9);
    expect(refusal(GROUPED, { sizes: { maxSizeBytes: 0 } })).toBe(
      'sizes.maxSizeBytes must be a positive integer, got 0',
    );
    expect(refusal(GROUPED, { sizes: [] })).toBe('sizes must be an object, got ');
    expect(refusal(GROUPED, { sizes: 3 })).toBe('sizes must be an object, got 3');
    expect(refusal(GROUPED, { sizes: { maxSizeByte: 1 } })).toBe(
      'unknown sizes.maxSizeByte (nearest sizes.maxSizeBytes) of sizes.maxSizeBytes',
    );
    // One unknown at the top is said before one in a group, whichever valibot found first.
    expect(refusal(GROUPED, { sizes: { maxSizeByte: 1 }, nam: 'a' })).toBe('unknown nam (nearest name) of name/sizes');
  });

  it('reads the rows back from the schema', () => {
    expect(rowsOf(SCHEMA)).toEqual({ name: NAME_ROW, maxSizeBytes: SIZE_ROW, onDone: HOOK_ROW });
    expect(Object.keys(rowsOf(SCHEMA))).toEqual(['name', 'maxSizeBytes', 'onDone']);
  });
});
