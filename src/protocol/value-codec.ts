/**
 * The value codec: a tagged JSON form for a settled value that a JSON channel carries without losing
 * what structured clone keeps: undefined, NaN, ±Infinity, -0, BigInt, Date, RegExp, Map, Set,
 * ArrayBuffer, typed arrays and DataView, Error, boxed primitives, holes, shared and cyclic
 * references. Functions (and RPC stubs) become `makeFunction(key)` on the decoding side, `key`
 * being the object key they were found under (undefined elsewhere).
 *
 * Two channels use it: IsolateExecutor's host ↔ supervisor WebSocket (a run's value reaches the
 * supervisor through workerd's own RPC serialization, as upstream's `evaluate` return does, and
 * crosses to the host in this form), and the remote executor's capnweb connection, which cannot
 * carry a Map, a Set, a RegExp or -0 by itself. It is runtime-neutral, so the root entry may reach it.
 *
 * Encoded form: strings, booleans, null and finite non-negative-zero numbers stand for
 * themselves; everything else is an array whose first element is a tag.
 *
 * `createValueCodec` (create-value-codec.ts) is self-contained on purpose: the supervisor's bundle
 * imports it, and `VALUE_CODEC_SOURCE` is its source text, so both ends run one implementation.
 */
import { createValueCodec } from './create-value-codec.js';
import { ExecutorError } from './errors.js';
import { selfContainedSource } from './function-source.js';
import { FUNCTION_NOT_RETAINED_MESSAGE, INERT_FUNCTION_TEXT } from './texts.js';

export { createValueCodec, type ValueCodec } from './create-value-codec.js';

/** The codec's source: an expression whose value is `createValueCodec`. */
export const VALUE_CODEC_SOURCE = /* @__PURE__ */ selfContainedSource(createValueCodec);

const INERT_FUNCTION_BRAND = Symbol.for('codemode.inertFunction');

/**
 * The keys a host's runtime calls by itself: `JSON.stringify` calls `toJSON`, printing calls
 * `toString` and `valueOf`, `await` calls `then`. A function from the sandbox under one of them
 * must not be callable, or serializing, printing or awaiting a result would run it.
 */
const IMPLICITLY_CALLED_KEYS: ReadonlySet<string> = new Set(['toJSON', 'toString', 'valueOf', 'then']);

/**
 * What a function in a result becomes under one of those keys: an inert marker that
 * `JSON.stringify` drops (as it drops a function) and that prints as `INERT_FUNCTION_TEXT`.
 */
export class InertFunction {
  /** Its brand: the value codec encodes a marker as the function it stands for. */
  readonly [INERT_FUNCTION_BRAND] = true;

  toJSON(): undefined {
    return undefined;
  }

  toString(): string {
    return INERT_FUNCTION_TEXT;
  }
}

function notRetained(): Promise<never> {
  return Promise.reject(new ExecutorError('HANDLE_NOT_FOUND', FUNCTION_NOT_RETAINED_MESSAGE));
}

/**
 * The host's codec: a function in a result decodes to one that rejects with `HANDLE_NOT_FOUND`
 * when called, or, under a key the host's runtime calls by itself, to an `InertFunction`.
 */
const hostCodec = /* @__PURE__ */ createValueCodec((key) =>
  key !== undefined && IMPLICITLY_CALLED_KEYS.has(key) ? Object.freeze(new InertFunction()) : () => notRetained(),
);

export function encodeValue(value: unknown): unknown {
  return hostCodec.encode(value);
}

export function decodeValue(encoded: unknown): unknown {
  return hostCodec.decode(encoded);
}
