/**
 * How the value codec decodes a typed array on a host that may lack its kind. The sandbox
 * (workerd) has `Float16Array`; Node before 24 does not, and such a host must still get the
 * values, as structured clone would give them to a host that has the type.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createValueCodec } from '../../src/protocol/value-codec.js';

const codec = createValueCodec(() => undefined);

/** The encoded form of a view of `kind` with these bytes, as the supervisor writes it. */
function encodedView(kind: string, bytes: number[]): unknown {
  return ['v', kind, btoa(String.fromCharCode(...bytes))];
}

/** Half-precision bits, little-endian, as a Float16Array lays them out on every host here. */
function halves(...bits: number[]): number[] {
  return bits.flatMap((word) => [word & 0xff, word >> 8]);
}

const global = globalThis as Record<string, unknown>;
const nativeFloat16 = global.Float16Array;

afterEach(() => {
  if (nativeFloat16 === undefined) delete global.Float16Array;
  else global.Float16Array = nativeFloat16;
});

describe('a Float16Array on a host without the type', () => {
  it('decodes to a Float32Array of the same values, which JSON writes as upstream does', () => {
    delete global.Float16Array;
    // 1.5, 2, -0.5, 65504 (the largest half), 2^-24 (the smallest subnormal)
    const decoded = codec.decode(encodedView('Float16Array', halves(0x3e00, 0x4000, 0xb800, 0x7bff, 0x0001)));
    expect(decoded).toBeInstanceOf(Float32Array);
    expect([...(decoded as Float32Array)]).toEqual([1.5, 2, -0.5, 65504, 2 ** -24]);
    expect(JSON.parse(JSON.stringify(decoded))).toEqual({ '0': 1.5, '1': 2, '2': -0.5, '3': 65504, '4': 2 ** -24 });
  });

  it('keeps the signed zero, the infinities and NaN', () => {
    delete global.Float16Array;
    const decoded = codec.decode(encodedView('Float16Array', halves(0x8000, 0x7c00, 0xfc00, 0x7e00))) as Float32Array;
    expect(Object.is(decoded[0], -0)).toBe(true);
    expect([decoded[1], decoded[2]]).toEqual([Infinity, -Infinity]);
    expect(Number.isNaN(decoded[3])).toBe(true);
  });
});

describe('a typed array on a host that has its kind', () => {
  it('decodes to that kind', () => {
    class Float16Standin extends Uint16Array {}
    global.Float16Array = Float16Standin;
    expect(codec.decode(encodedView('Float16Array', halves(0x3e00)))).toBeInstanceOf(Float16Standin);
    expect(codec.decode(encodedView('Int16Array', [2, 1]))).toEqual(new Int16Array([258]));
  });

  it('leaves a kind nobody knows as its bytes', () => {
    expect(codec.decode(encodedView('Float8Array', [1, 2]))).toEqual(new Uint8Array([1, 2]));
  });
});
