/**
 * The intrinsics the harness relies on, captured when the harness module is evaluated: the entry
 * module imports it first, so this runs before any user code can replace a global. Every other
 * harness module reads the globals through these. (The annotations let the supervisor's bundle,
 * which needs a few of them, drop the rest.)
 */
export const $Proxy = Proxy;
export const $Promise = Promise;
export const $Error = Error;
export const $TypeError = TypeError;
export const $String = String;
export const $apply = Reflect.apply;
export const $hasOwn = Object.hasOwn;
export const $keys = Object.keys;
export const $getPrototypeOf = Object.getPrototypeOf;
export const $isArray = Array.isArray;
export const $objectToString = Object.prototype.toString;
export const $Map = Map;
export const $ObjectPrototype = Object.prototype;
export const $setTimeout = setTimeout;
export const $clearTimeout = clearTimeout;
export const $now = Date.now;
export const $get = Reflect.get;
export const $bind = Function.prototype.bind;
export const $Object = Object;
export const $then = Promise.prototype.then;
export const $promiseResolve = Promise.resolve;
export const $promiseReject = Promise.reject;
/** V8's, which workerd's types leave out. */
export const $captureStackTrace: (target: object, below: (...args: never[]) => unknown) => void = /* @__PURE__ */ $get(
  Error,
  'captureStackTrace',
);
export const $crypto = crypto;
export const $getRandomValues = crypto.getRandomValues;
export const $Uint8Array = Uint8Array;

const $encoder = /* @__PURE__ */ new TextEncoder();
const $encode = TextEncoder.prototype.encode;

export function utf8Bytes(text: string): number {
  return $apply($encode, $encoder, [text]).byteLength;
}
