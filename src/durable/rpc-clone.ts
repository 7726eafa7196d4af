/**
 * What crosses a facet call, as Workers RPC carries it: structured-cloneable values are copied
 * (shared references and cycles kept), a function or an `RpcTarget` instance crosses as a stub by
 * reference whose every call is asynchronous and whose arguments and result cross the same way,
 * and anything else (a symbol, an instance of another class, a WeakMap...) is refused.
 */
import { openGate } from './output-gate.js';
import { formatCouldNotClone, formatNotAMethod, formatNotSerializable } from './texts.js';

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

/**
 * Calls `fn` as over RPC: arguments across, then the result or the error back across. The output
 * gate opens before the call goes and before its outcome comes back, so whatever a facet wrote is
 * committed before anything outside it can see or act on it.
 */
async function callAcross(fn: (...args: unknown[]) => unknown, self: unknown, args: unknown[]): Promise<unknown> {
  const crossedArgs = crossRpc(args) as unknown[];
  openGate();
  let result: unknown;
  try {
    result = await fn.apply(self, crossedArgs);
  } catch (error) {
    openGate();
    throw crossRpcError(error);
  }
  openGate();
  return crossRpc(result);
}

/** The class a stub shows, as workerd's stubs show theirs; like theirs, every stub is a function. */
class RpcStub {}

/**
 * A stub for `target` (an object, or the promise of one, as a facet's instance is) whose members
 * are called as over RPC. A function crosses as a stub too: calling it calls the function.
 */
export function stubFor(target: object | Promise<object>): object {
  const shape = Object.setPrototypeOf(() => {}, RpcStub.prototype) as object;
  return new Proxy(shape, {
    get(_shape, member) {
      // A stub is not a promise (`await stub` gives the stub) and JSON leaves it out, as workerd's.
      if (typeof member === 'symbol' || member === 'then' || member === 'toJSON') return undefined;
      return async (...args: unknown[]) => {
        const instance = (await target) as Record<string, unknown>;
        const method = instance[member];
        if (typeof method !== 'function') throw new TypeError(formatNotAMethod(member));
        return callAcross(method as (...a: unknown[]) => unknown, instance, args);
      };
    },
    apply(_shape, _self, args) {
      return (async () => {
        const callee = await target;
        if (typeof callee !== 'function') throw new TypeError(formatNotAMethod('call'));
        return callAcross(callee as (...a: unknown[]) => unknown, undefined, args);
      })();
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
    case 'function': {
      if (seen.has(value)) return seen.get(value);
      const stub = stubFor(value);
      seen.set(value, stub);
      return stub;
    }
    case 'symbol':
      throw new DOMException(formatCouldNotClone(String(value)), 'DataCloneError');
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) return seen.get(object);
  if (isRpcTarget(object)) {
    const stub = stubFor(object);
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
  if (!isPlatformCloneable(object)) throw uncloneable(prototype);
  const copy = structuredClone(object);
  seen.set(object, copy);
  return copy;
}

/** The error workerd gives: V8's for a built-in (a WeakMap, a Promise...), its own for an application class. */
function uncloneable(prototype: { constructor?: { name?: string } } | null): DOMException {
  const name = prototype?.constructor?.name ?? 'Object';
  const builtIn = (globalThis as Record<string, unknown>)[name] === prototype?.constructor;
  const text = builtIn ? formatCouldNotClone(`#<${name}>`) : formatNotSerializable(name);
  return new DOMException(text, 'DataCloneError');
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
    Object.prototype.toString.call(object) === '[object BigInt]'
  );
}
