/**
 * The expanded size of an encoded result: the UTF-8 size of its encoded JSON with every shared
 * reference written out in full. Each expectation is the JSON size of the codec's encoding of a
 * value built without sharing (nothing in it is shared, so the codec writes it all out).
 */
import { describe, expect, it } from 'vitest';
import { createExpandedSizer } from '../../../src/isolate/contract/expanded-size.js';
import { encodeValue } from '../../../src/protocol/value-codec.js';

const expandedSize = createExpandedSizer();

function encodedBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(encodeValue(value)), 'utf8');
}

/** A tree doubled `times` over, built from `leaf()`: shared when `leaf` and the halves are one value. */
function doubled(times: number, leaf: () => unknown, shared: boolean): unknown {
  if (shared) {
    let value = leaf();
    for (let i = 0; i < times; i++) value = [value, value];
    return value;
  }
  if (times === 0) return leaf();
  return [doubled(times - 1, leaf, false), doubled(times - 1, leaf, false)];
}

describe('the expanded size of an encoded value', () => {
  it('is the encoded size of a value that shares nothing', () => {
    const holes: number[] = [];
    holes[1] = 1;
    const value = {
      text: 'é "quoted" \u0001',
      numbers: [1, -0, NaN, 2.5, 10n],
      when: new Date(0),
      pattern: /a+/g,
      map: new Map([['k', new Set([1])]]),
      bytes: new Uint8Array([1, 2, 3]),
      error: new RangeError('bad'),
      holes,
      nothing: undefined,
    };
    expect(expandedSize(encodeValue(value))).toBe(encodedBytes(value));
  });

  it('writes every shared value out in full', () => {
    const leaf = () => ({ name: 'ü', tags: new Map([[1, [true, null]]]) });
    const shared = doubled(6, leaf, true);
    expect(JSON.stringify(encodeValue(shared))).toContain('["x",');
    expect(expandedSize(encodeValue(shared))).toBe(encodedBytes(doubled(6, leaf, false)));
  });

  it('counts a reference back to an enclosing value as the reference it is', () => {
    const cycle: unknown[] = ['a'];
    cycle.push(cycle);
    expect(expandedSize(encodeValue(cycle))).toBe(encodedBytes(cycle));
  });

  it('measures 28 doublings without expanding them', () => {
    // A leaf ["a",1,1] is 9 bytes, and so is a node ["a",2,…,…] beside its two halves: 2^(k+1) - 1
    // nodes of 9 bytes for k doublings, as a value that shares nothing shows at a size it can hold.
    const bytesOf = (times: number) => 9 * (2 ** (times + 1) - 1);
    expect(encodedBytes(doubled(10, () => [1], false))).toBe(bytesOf(10));
    expect(expandedSize(encodeValue(doubled(28, () => [1], true)))).toBe(bytesOf(28));
  });
});
