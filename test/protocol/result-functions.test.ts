/**
 * What a function in a result becomes on the host (value-codec.ts): under a key the host's runtime
 * calls by itself, a function that runs nothing of the sandbox's and keeps the object's data;
 * anywhere else, a function that rejects with HANDLE_NOT_FOUND.
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_NOT_RETAINED_MESSAGE, INERT_FUNCTION_TEXT } from '../../src/protocol/texts.js';
import { decodeValue, encodeValue } from '../../src/protocol/value-codec.js';

/** An object as the sandbox's encoder writes it: `{a: 1}` plus a function under each key. */
function withFunctionsUnder(...keys: string[]): Record<string, unknown> {
  return decodeValue(['o', 'a', 1, ...keys.flatMap((key) => [key, ['f']])]) as Record<string, unknown>;
}

describe('a function in a result, on the host', () => {
  it('is a function under toJSON, toString, valueOf and then, never an object', () => {
    const value = withFunctionsUnder('toJSON', 'toString', 'valueOf', 'then');
    for (const key of ['toJSON', 'toString', 'valueOf', 'then']) {
      expect(typeof value[key]).toBe('function');
      expect(String(value[key])).toBe(INERT_FUNCTION_TEXT);
    }
  });

  it('keeps the data when serialized through its toJSON, at the top level and nested', () => {
    expect(JSON.stringify(withFunctionsUnder('toJSON'))).toBe('{"a":1}');
    expect(JSON.stringify({ keep: 2, inner: withFunctionsUnder('toJSON') })).toBe('{"keep":2,"inner":{"a":1}}');
  });

  it('prints as the inert text and gives the object as its value', () => {
    const value = withFunctionsUnder('toString', 'valueOf');
    expect(`${value}`).toBe(INERT_FUNCTION_TEXT);
    expect((value.valueOf as () => unknown)()).toBe(value);
  });

  it("settles an await with the object's other keys", async () => {
    const value = withFunctionsUnder('then');
    expect(await Promise.resolve(value)).toEqual({ a: 1 });
  });

  it('rejects with HANDLE_NOT_FOUND under any other key, and encodes again as a function', async () => {
    const value = withFunctionsUnder('toJSON', 'later');
    await expect((value.later as () => Promise<unknown>)()).rejects.toMatchObject({
      code: 'HANDLE_NOT_FOUND',
      message: FUNCTION_NOT_RETAINED_MESSAGE,
    });
    expect(encodeValue(value)).toEqual(['o', 'a', 1, 'toJSON', ['f'], 'later', ['f']]);
  });
});
