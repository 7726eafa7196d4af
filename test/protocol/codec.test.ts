import { Buffer } from 'node:buffer';
import { createContext, runInContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  BINARY_CODEC_SOURCE,
  BINARY_TAG,
  type BinaryCodec,
  binaryCodec,
  createBinaryCodec,
} from '../../src/protocol/index.js';

const { stringify, parse } = binaryCodec;

/** Bytes with no short period, so a chunk written twice or out of order changes the output. */
function patternBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

/** Node's own base64, an encoder independent of the codec's chunked btoa. */
function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function roundTrip(value: unknown): unknown {
  return parse(stringify(value));
}

describe('binaryCodec encodings', () => {
  it('tags a Uint8Array with its kind and base64 data, the shape of upstream 0.3.7+', () => {
    expect(BINARY_TAG).toBe('__codemode_binary_v1__');
    expect(stringify(new Uint8Array([1, 2, 3]))).toBe('{"__codemode_binary_v1__":"Uint8Array","data":"AQID"}');
    expect(stringify(new Uint8Array([]))).toBe('{"__codemode_binary_v1__":"Uint8Array","data":""}');
  });

  it('tags an ArrayBuffer as ArrayBuffer and every other view as ArrayBufferView', () => {
    expect(stringify(new Uint8Array([255, 0]).buffer)).toBe('{"__codemode_binary_v1__":"ArrayBuffer","data":"/wA="}');
    // 258 is 0x0102, little-endian on every platform Node and workerd run on.
    expect(stringify(new Int16Array([258]))).toBe('{"__codemode_binary_v1__":"ArrayBufferView","data":"AgE="}');
    expect(stringify(new DataView(new Uint8Array([9, 8, 7, 6]).buffer, 1, 2))).toBe(
      '{"__codemode_binary_v1__":"ArrayBufferView","data":"CAc="}',
    );
  });

  it('encodes only the bytes a view covers', () => {
    const whole = new Uint8Array([10, 20, 30, 40, 50]);
    expect(stringify(whole.subarray(1, 3))).toBe(
      `{"${BINARY_TAG}":"Uint8Array","data":"${base64(new Uint8Array([20, 30]))}"}`,
    );
    expect(stringify(new Float32Array(whole.buffer.slice(0, 4)))).toBe(
      `{"${BINARY_TAG}":"ArrayBufferView","data":"${base64(whole.subarray(0, 4))}"}`,
    );
  });

  it('leaves values without binaries exactly as JSON.stringify writes them', () => {
    const value = { a: 1, b: [null, 'x', true, { c: -2.5 }], d: 'ü🔍', u: undefined, date: new Date(0) };
    expect(stringify(value)).toBe(JSON.stringify(value));
    expect(parse(JSON.stringify(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it('lets toJSON run first, so a Node Buffer crosses as {type, data} as it does upstream', () => {
    expect(stringify(Buffer.from([1, 2]))).toBe('{"type":"Buffer","data":[1,2]}');
  });
});

describe('binaryCodec round trips', () => {
  it('brings a Uint8Array back as a Uint8Array', () => {
    const back = roundTrip(new Uint8Array([0, 1, 127, 128, 255]));
    expect(back).toBeInstanceOf(Uint8Array);
    expect(Array.from(back as Uint8Array)).toEqual([0, 1, 127, 128, 255]);
  });

  it('brings an ArrayBuffer back as an ArrayBuffer', () => {
    const back = roundTrip(new Uint8Array([4, 5, 6]).buffer);
    expect(back).toBeInstanceOf(ArrayBuffer);
    expect(Array.from(new Uint8Array(back as ArrayBuffer))).toEqual([4, 5, 6]);
  });

  it('brings an Int16Array and a DataView back as Uint8Arrays of their bytes', () => {
    const int16 = roundTrip(new Int16Array([258, -1]));
    expect(int16).toBeInstanceOf(Uint8Array);
    expect(int16).not.toBeInstanceOf(Int16Array);
    expect(Array.from(int16 as Uint8Array)).toEqual([2, 1, 255, 255]);

    const view = roundTrip(new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2));
    expect(view).toBeInstanceOf(Uint8Array);
    expect(Array.from(view as Uint8Array)).toEqual([2, 3]);
  });

  it('finds binaries at any depth', () => {
    const back = roundTrip({
      b: new Uint8Array([1]),
      list: [new Uint8Array([2, 3]).buffer, { deep: [new Int8Array([-1])] }],
    }) as {
      b: unknown;
      list: [unknown, { deep: [unknown] }];
    };
    expect(back.b).toBeInstanceOf(Uint8Array);
    expect(Array.from(back.b as Uint8Array)).toEqual([1]);
    expect(back.list[0]).toBeInstanceOf(ArrayBuffer);
    expect(Array.from(new Uint8Array(back.list[0] as ArrayBuffer))).toEqual([2, 3]);
    expect(back.list[1].deep[0]).toBeInstanceOf(Uint8Array);
    expect(Array.from(back.list[1].deep[0] as Uint8Array)).toEqual([255]);
  });

  it('passes through objects that carry the tag without string data', () => {
    for (const text of [
      `{"${BINARY_TAG}":"Uint8Array","data":5}`,
      `{"${BINARY_TAG}":"Uint8Array","data":null}`,
      `{"${BINARY_TAG}":"ArrayBuffer","data":["AQI="]}`,
      `{"${BINARY_TAG}":"Uint8Array"}`,
    ]) {
      expect(parse(text)).toEqual(JSON.parse(text));
    }
  });

  it('decodes any tagged object with string data, the kind deciding only ArrayBuffer or not', () => {
    const unknownKind = parse(`{"${BINARY_TAG}":"Float64Array","data":"AQI=","extra":1}`);
    expect(unknownKind).toBeInstanceOf(Uint8Array);
    expect(Array.from(unknownKind as Uint8Array)).toEqual([1, 2]);
  });

  it('carries buffers larger than one 32768-byte chunk', () => {
    for (const length of [32767, 32768, 32769, 65536, 100_003]) {
      const bytes = patternBytes(length);
      const text = stringify(bytes);
      expect(text).toBe(`{"${BINARY_TAG}":"Uint8Array","data":"${base64(bytes)}"}`);
      const back = parse(text) as Uint8Array;
      expect(back).toBeInstanceOf(Uint8Array);
      expect(back.length).toBe(length);
      expect(Buffer.compare(Buffer.from(back), Buffer.from(bytes))).toBe(0);
    }
  });

  it('gives every createBinaryCodec call an equivalent codec', () => {
    const other = createBinaryCodec();
    const value = { a: new Uint8Array([7]), b: new Uint8Array([8]).buffer };
    expect(other.stringify(value)).toBe(stringify(value));
  });
});

/** Values whose encodings the isolated codec must reproduce byte for byte. */
function corpus(): unknown[] {
  const shared = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  return [
    new Uint8Array([1, 2, 3]),
    new Uint8Array([]),
    shared.subarray(2, 6),
    shared.buffer,
    new Int16Array([258, -2]),
    new Float64Array([Math.PI]),
    new DataView(shared.buffer, 3, 4),
    { nested: [new Uint8Array([9]), { buffer: new ArrayBuffer(3) }], text: 'x' },
    [undefined, null, 1, 'two', new Uint32Array([0xdeadbeef])],
    patternBytes(70_000),
    { plain: true, n: 1.5, s: 'ü' },
  ];
}

describe('BINARY_CODEC_SOURCE evaluated on its own', () => {
  it('has no free reference to the module it came from', () => {
    // A Function body sees only the global scope, never the module's bindings.
    const isolated = new Function(`return ${BINARY_CODEC_SOURCE}`)()() as BinaryCodec;
    for (const value of corpus()) {
      expect(isolated.stringify(value)).toBe(stringify(value));
    }
  });

  it('decodes what the host codec encodes, and the reverse', () => {
    const isolated = new Function(`return ${BINARY_CODEC_SOURCE}`)()() as BinaryCodec;
    for (const value of corpus()) {
      const text = stringify(value);
      expect(stringify(isolated.parse(text))).toBe(stringify(parse(text)));
      expect(isolated.stringify(isolated.parse(text))).toBe(text.replace(/"ArrayBufferView"/g, '"Uint8Array"'));
    }
  });

  it('runs in a fresh realm that has only the ECMAScript globals plus atob and btoa', () => {
    // The sandbox builds its values in its own realm; strings are what cross back.
    const context = createContext({ atob, btoa });
    const encode = (expression: string): string =>
      runInContext(`(${BINARY_CODEC_SOURCE})().stringify(${expression})`, context) as string;
    expect(encode('new Uint8Array([1, 2, 3])')).toBe(stringify(new Uint8Array([1, 2, 3])));
    expect(encode('new Int16Array([258]).buffer')).toBe(stringify(new Int16Array([258]).buffer));
    expect(encode('{ v: new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2) }')).toBe(
      stringify({ v: new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2) }),
    );
    const bytes = patternBytes(40_000);
    const big = runInContext(
      `(() => { const b = new Uint8Array(40000); for (let i = 0; i < b.length; i++) b[i] = (i * 31 + (i >> 8)) & 0xff; return (${BINARY_CODEC_SOURCE})().stringify(b); })()`,
      context,
    ) as string;
    expect(big).toBe(stringify(bytes));
    const kind = runInContext(
      `(() => { const v = (${BINARY_CODEC_SOURCE})().parse(${JSON.stringify(stringify({ a: new Uint8Array([5]).buffer, b: new Uint8Array([6]) }))}); return [v.a instanceof ArrayBuffer, v.b instanceof Uint8Array, v.b[0]].join(); })()`,
      context,
    ) as string;
    expect(kind).toBe('true,true,6');
  });
});
