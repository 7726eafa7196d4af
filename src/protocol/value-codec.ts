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

/**
 * The keys a host's runtime calls by itself: `JSON.stringify` calls `toJSON`, printing calls
 * `toString` and `valueOf`, `await` calls `then`. A function from the sandbox under one of them is
 * a function on the host too (upstream's host gets an RPC stub there, which is callable), but one
 * that runs nothing of the sandbox's and rejects nothing: it does what the runtime expects of the
 * key with the data the object holds. `toJSON` gives the object's other keys, so serializing keeps
 * the data; `toString` gives `INERT_FUNCTION_TEXT`; `valueOf` gives the object itself, as
 * `Object.prototype.valueOf` does; `then` fulfils with the object's other keys, so awaiting it
 * settles. Each prints as `INERT_FUNCTION_TEXT`.
 */
const STAND_INS: Readonly<Record<string, (this: unknown, ...args: unknown[]) => unknown>> = {
  toJSON() {
    return withoutKey(this, 'toJSON');
  },
  toString() {
    return INERT_FUNCTION_TEXT;
  },
  valueOf() {
    return this;
  },
  // A computed key, as the lint asks of a `then` in a literal; nothing awaits this table.
  ['then' as string](onFulfilled: unknown) {
    if (typeof onFulfilled === 'function') onFulfilled(withoutKey(this, 'then'));
  },
};

function standIn(key: string): ((...args: unknown[]) => unknown) | undefined {
  if (!Object.hasOwn(STAND_INS, key)) return undefined;
  const method = STAND_INS[key]!;
  const made = function (this: unknown, ...args: unknown[]) {
    return Reflect.apply(method, this, args);
  };
  Object.defineProperty(made, 'name', { value: key });
  Object.defineProperty(made, 'toString', { value: () => INERT_FUNCTION_TEXT });
  return made;
}

/** A copy of an object's own enumerable string-keyed members but one (`undefined` for a non-object). */
function withoutKey(value: unknown, dropped: string): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key !== dropped) {
      Object.defineProperty(copy, key, {
        value: (value as Record<string, unknown>)[key],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return copy;
}

function notRetained(): Promise<never> {
  return Promise.reject(new ExecutorError('HANDLE_NOT_FOUND', FUNCTION_NOT_RETAINED_MESSAGE));
}

/**
 * The host's codec: a function in a result decodes to one that rejects with `HANDLE_NOT_FOUND`
 * when called, or, under a key the host's runtime calls by itself, to its stand-in.
 */
const hostCodec = /* @__PURE__ */ createValueCodec(
  (key) => (key === undefined ? undefined : standIn(key)) ?? (() => notRetained()),
);

export function encodeValue(value: unknown): unknown {
  return hostCodec.encode(value);
}

export function decodeValue(encoded: unknown): unknown {
  return hostCodec.decode(encoded);
}
