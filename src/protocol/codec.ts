/**
 * The binary codec of tool calls: JSON with a replacer and a reviver that carry `Uint8Array`,
 * `ArrayBuffer` and other views as `{"__codemode_binary_v1__": kind, "data": base64}`, the tag
 * `@cloudflare/codemode` uses since 0.3.7. It applies in both directions of a tool call: the
 * argument array going to the host and the envelope coming back.
 *
 * `createBinaryCodec` is self-contained on purpose: a native executor injects its source text
 * (`BINARY_CODEC_SOURCE`) into the sandbox, so both sides run one implementation. A sandbox that
 * imports it as a module instead passes the intrinsics it captured before user code ran, so a
 * program that replaces `btoa` or `String` on `globalThis` cannot break its tool calls.
 */

import { selfContainedSource } from './function-source.js';

export interface BinaryCodec {
  stringify(value: unknown): string;
  parse(text: string): unknown;
}

export const BINARY_TAG = '__codemode_binary_v1__';

/** The globals the codec calls; by default the ones of the realm it runs in. */
export interface BinaryCodecIntrinsics {
  JSON: Pick<JSON, 'stringify' | 'parse'>;
  btoa: (data: string) => string;
  atob: (data: string) => string;
  String: Pick<StringConstructor, 'fromCharCode'>;
  Array: Pick<ArrayConstructor, 'from' | 'isArray'>;
  ArrayBuffer: ArrayBufferConstructor;
  Uint8Array: Uint8ArrayConstructor;
}

export function createBinaryCodec(intrinsics?: BinaryCodecIntrinsics): BinaryCodec {
  // Every call goes through the intrinsics the codec was made with, never a global read later.
  const {
    JSON: json,
    btoa: toBase64,
    atob: fromBase64,
    String: string,
    Array: array,
    ArrayBuffer: arrayBuffer,
    Uint8Array: uint8Array,
  } = intrinsics ?? globalThis;
  const tag = '__codemode_binary_v1__';
  const chunk = 32768;

  function bytesToBase64(bytes: Uint8Array): string {
    let binary = '';
    for (let offset = 0; offset < bytes.length; offset += chunk) {
      binary += string.fromCharCode.apply(null, array.from(bytes.subarray(offset, offset + chunk)));
    }
    return toBase64(binary);
  }

  function base64ToBytes(data: string): Uint8Array {
    const binary = fromBase64(data);
    const bytes = new uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  function replacer(this: unknown, _key: string, value: unknown): unknown {
    if (value instanceof uint8Array) return { [tag]: 'Uint8Array', data: bytesToBase64(value) };
    if (value instanceof arrayBuffer) return { [tag]: 'ArrayBuffer', data: bytesToBase64(new uint8Array(value)) };
    if (arrayBuffer.isView(value)) {
      const view = new uint8Array(value.buffer, value.byteOffset, value.byteLength);
      return { [tag]: 'ArrayBufferView', data: bytesToBase64(view) };
    }
    return value;
  }

  function reviver(_key: string, value: unknown): unknown {
    if (value !== null && typeof value === 'object' && tag in value) {
      const record = value as Record<string, unknown>;
      if (typeof record.data === 'string') {
        const bytes = base64ToBytes(record.data);
        return record[tag] === 'ArrayBuffer' ? bytes.buffer : bytes;
      }
    }
    return value;
  }

  return {
    stringify: (value) => json.stringify(value, replacer) as string,
    parse: (text) => json.parse(text, reviver) as unknown,
  };
}

/** The codec's source: an expression whose value is a function returning `{stringify, parse}`. */
export const BINARY_CODEC_SOURCE = /* @__PURE__ */ selfContainedSource(createBinaryCodec);

export const binaryCodec: BinaryCodec = /* @__PURE__ */ createBinaryCodec();
