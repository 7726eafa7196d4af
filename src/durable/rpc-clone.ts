/**
 * What crosses a facet call, as Workers RPC carries it: structured-cloneable values are copied
 * (shared references and cycles kept), a function or an `RpcTarget` instance crosses as a stub by
 * reference whose every call is asynchronous and whose arguments and result cross the same way,
 * and anything else (a symbol, an instance of another class, a WeakMap...) is refused.
 */
import { formatCannotCross, formatNotAMethod } from './texts.js';

type Seen = Map<object, unknown>;

/**
 * The brand the register entry's `RpcTarget` puts on its prototype (src/register/cloudflare-workers.js).
 * A registry symbol, not the class: the stand-in a host's upstream imports and the one this module
 * could import may be two instances of one file (two loaders, as under a test runner).
 */
const RPC_TARGET_BRAND = Symbol.for('@supolka/cloudflare-codemode-executor:RpcTarget');

function isRpcTarget(object: object): boolean {
  return (object as Record<symbol, unknown>)[RPC_TARGET_BRAND] === true;
}

/** Copies `value` across the boundary. */
function crossRpc(value: unknown): unknown {
  return cross(value, new Map());
}

/** Rethrows what a call threw, as the caller of a Workers RPC sees it: a copy, not the original. */
function crossRpcError(error: unknown): unknown {
  try {
    return structuredClone(error);
  } catch {
    return new Error(String(error));
  }
}

/** Calls `fn` as over RPC: arguments across, then the result or the error back across. */
async function callAcross(fn: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): Promise<unknown> {
  const crossedArgs = crossRpc(args) as unknown[];
  let result: unknown;
  try {
    result = await fn.apply(self, crossedArgs);
  } catch (error) {
    throw crossRpcError(error);
  }
  return crossRpc(result);
}

/** A stub for an object whose methods are called as over RPC; `name` is for error texts. */
export function stubFor(target: object | Promise<object>, name: string): object {
  return new Proxy(Object.create(null) as object, {
    get(_shape, member) {
      // A stub is not a promise: `await stub` must give the stub.
      if (typeof member === 'symbol' || member === 'then') return undefined;
      return async (...args: unknown[]) => {
        const instance = (await target) as Record<string, unknown>;
        const method = instance[member];
        if (typeof method !== 'function') throw new TypeError(formatNotAMethod(name, member));
        return callAcross(method as (...a: unknown[]) => unknown, instance, args);
      };
    },
  });
}

function cross(value: unknown, seen: Seen): unknown {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return value;
    case 'function':
      return (...args: unknown[]) => callAcross(value as (...a: unknown[]) => unknown, undefined, args);
    case 'symbol':
      throw new DOMException(formatCannotCross('a symbol'), 'DataCloneError');
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) return seen.get(object);
  if (isRpcTarget(object)) {
    const stub = stubFor(object, object.constructor?.name ?? 'RpcTarget');
    seen.set(object, stub);
    return stub;
  }
  if (Array.isArray(object)) {
    const copy = new Array<unknown>(object.length);
    seen.set(object, copy);
    // `in` skips holes: the runtime's execution log is a sparse array indexed by sequence number.
    for (let index = 0; index < object.length; index++) if (index in object) copy[index] = cross(object[index], seen);
    return copy;
  }
  if (object instanceof Map) {
    const copy = new Map();
    seen.set(object, copy);
    for (const [key, entry] of object) copy.set(cross(key, seen), cross(entry, seen));
    return copy;
  }
  if (object instanceof Set) {
    const copy = new Set();
    seen.set(object, copy);
    for (const entry of object) copy.add(cross(entry, seen));
    return copy;
  }
  const prototype = Object.getPrototypeOf(object);
  if (prototype === Object.prototype || prototype === null) {
    const copy: Record<string, unknown> = {};
    seen.set(object, copy);
    for (const key of Object.keys(object)) copy[key] = cross((object as Record<string, unknown>)[key], seen);
    return copy;
  }
  // Everything else structured clone knows (Date, RegExp, ArrayBuffer, views, Error, Blob...);
  // an instance of an application class is refused, as Workers RPC refuses it.
  if (!isPlatformCloneable(object))
    throw new DOMException(
      formatCannotCross(`an instance of ${prototype?.constructor?.name ?? 'a class'}`),
      'DataCloneError',
    );
  const copy = structuredClone(object);
  seen.set(object, copy);
  return copy;
}

function isPlatformCloneable(object: object): boolean {
  return (
    object instanceof Date ||
    object instanceof RegExp ||
    object instanceof ArrayBuffer ||
    ArrayBuffer.isView(object) ||
    object instanceof Error ||
    object instanceof Blob ||
    object instanceof Boolean ||
    object instanceof Number ||
    object instanceof String ||
    (typeof BigInt !== 'undefined' && Object.prototype.toString.call(object) === '[object BigInt]')
  );
}
