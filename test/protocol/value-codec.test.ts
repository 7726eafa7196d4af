/** The wire's value codec: what capnweb alone cannot carry survives a round trip through it. */
import { deserialize, serialize } from 'capnweb';
import { describe, expect, it } from 'vitest';
import { ExecutorError } from '../../src/protocol/index.js';
import { decodeValue, encodeValue } from '../../src/protocol/value-codec.js';

/** Through the real capnweb serializer, as on the wire. */
function roundTrip(value: unknown): unknown {
  return decodeValue(deserialize(serialize(encodeValue(value))));
}

describe('the value codec', () => {
  it('is needed: capnweb alone throws on a Map and turns -0 into 0', () => {
    expect(() => serialize(new Map())).toThrow(/Cannot serialize value/);
    expect(Object.is(deserialize(serialize(-0)), -0)).toBe(false);
  });

  it('carries Map, Set, RegExp and -0, nested in each other', () => {
    const value = {
      map: new Map<unknown, unknown>([
        ['a', new Set([1, 2])],
        [3, [/x+/gi]],
      ]),
      zero: -0,
    };
    const back = roundTrip(value) as typeof value;
    expect(back).toEqual(value);
    expect(back.map.get('a')).toBeInstanceOf(Set);
    expect(((back.map.get(3) as RegExp[])[0] as RegExp).flags).toBe('gi');
    expect(Object.is(back.zero, -0)).toBe(true);
  });

  it('gives back a plain Uint8Array, not a Node Buffer', () => {
    const back = roundTrip(new Uint8Array([1, 2])) as Uint8Array;
    expect(back.constructor).toBe(Uint8Array);
    expect([...back]).toEqual([1, 2]);
  });

  it('keeps shared and cyclic references', () => {
    const shared = { n: 1 };
    const cyclic: Record<string, unknown> = { a: shared, b: shared };
    cyclic.self = cyclic;
    const back = roundTrip(cyclic) as Record<string, unknown>;
    expect(back.a).toBe(back.b);
    expect(back.self).toBe(back);
  });

  it('turns a function into one that rejects with HANDLE_NOT_FOUND instead of a live stub', async () => {
    const back = roundTrip({ fn: () => 1 }) as { fn: () => Promise<unknown> };
    const error = await back.fn().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ExecutorError);
    expect((error as ExecutorError).code).toBe('HANDLE_NOT_FOUND');
  });
});
