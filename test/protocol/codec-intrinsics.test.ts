/**
 * The binary codec over the intrinsics it is made with (what IsolateExecutor's harness passes, the
 * globals it captured before user code ran): a global replaced afterwards changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { binaryCodec, createBinaryCodec } from '../../src/protocol/codec.js';

describe('createBinaryCodec(intrinsics)', () => {
  it('encodes and decodes through the intrinsics it was made with, not the globals of the moment', () => {
    const calls: string[] = [];
    const original = { btoa: globalThis.btoa, atob: globalThis.atob };
    const codec = createBinaryCodec({
      JSON,
      btoa: (data) => {
        calls.push('btoa');
        return original.btoa(data);
      },
      atob: (data) => {
        calls.push('atob');
        return original.atob(data);
      },
      String,
      Array,
      ArrayBuffer,
      Uint8Array,
    });
    const refuse = () => {
      throw new Error('a replaced global was called');
    };
    globalThis.btoa = refuse;
    globalThis.atob = refuse;
    try {
      const text = codec.stringify([new Uint8Array([1, 2, 250])]);
      const [bytes] = codec.parse(text) as [Uint8Array];
      expect([...bytes]).toEqual([1, 2, 250]);
    } finally {
      globalThis.btoa = original.btoa;
      globalThis.atob = original.atob;
    }
    expect(calls).toEqual(['btoa', 'atob']);
  });

  it('writes what the host codec writes', () => {
    const codec = createBinaryCodec({ JSON, btoa, atob, String, Array, ArrayBuffer, Uint8Array });
    const value = { a: new Uint8Array([7]), b: new Uint16Array([1, 2]).buffer, c: new DataView(new ArrayBuffer(2)) };
    expect(codec.stringify(value)).toBe(binaryCodec.stringify(value));
  });
});
