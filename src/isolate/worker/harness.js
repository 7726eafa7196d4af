// The sandbox side of one execution (module "__codemode_harness.js" of every dynamic worker).
//
// The generated entry module imports it first, as `__codemode`, ahead of any user import, so it
// runs before user code: it captures the intrinsics it relies on and installs the console capture.
// Its own state (logs, bridge, retained functions) lives in this module's scope, out of user reach;
// user scope sees only the frozen module namespace `__codemode`.
//
// The markers /*@...@*/ are replaced when the supervisor config is built (sandbox-sources.ts).
import { WorkerEntrypoint } from 'cloudflare:workers';

const $Proxy = Proxy;
const $Error = Error;
const $TypeError = TypeError;
const $String = String;
const $apply = Reflect.apply;
const $hasOwn = Object.hasOwn;
const $keys = Object.keys;
const $getPrototypeOf = Object.getPrototypeOf;
const $isArray = Array.isArray;
const $objectToString = Object.prototype.toString;
const $Map = Map;
const $ObjectPrototype = Object.prototype;
const $setTimeout = setTimeout;
const $clearTimeout = clearTimeout;

const SETTINGS = /*@SETTINGS@*/ null;

// The protocol's binary codec, evaluated over captured intrinsics, so user code that replaces
// JSON, btoa or String on globalThis cannot break tool calls.
const codec = ((JSON, btoa, atob, String, Array, ArrayBuffer, Uint8Array) => (/*@BINARY_CODEC@*/ null)())(
  { stringify: JSON.stringify, parse: JSON.parse },
  btoa,
  atob,
  { fromCharCode: String.fromCharCode },
  { from: Array.from, isArray: Array.isArray },
  ArrayBuffer,
  Uint8Array,
);

// ---- console capture: log, warn and error, the methods the reference captures ----------------
let logs = [];

function capture(level) {
  return function (...args) {
    let message = '';
    // String(x) throws for a null-prototype object: that throw reaches user code, as upstream.
    for (let i = 0; i < args.length; i++) message += (i === 0 ? '' : ' ') + $String(args[i]);
    logs[logs.length] = { level, message };
  };
}
console.log = capture('log');
console.warn = capture('warn');
console.error = capture('error');

// ---- tool calls --------------------------------------------------------------------------------
let bridge = null;

async function dispatch(provider, tool, args) {
  const argsJson = codec.stringify(args);
  const envelope = codec.parse(await bridge.call(provider, tool, argsJson));
  if (envelope !== null && typeof envelope === 'object') {
    if (envelope.error) throw new $Error(envelope.error);
    return envelope.result;
  }
  return undefined;
}

/** One provider namespace: own members first, then every other string key dispatches by name. */
export function namespace(name, positional, factory) {
  const call = (tool, ...args) => dispatch(name, $String(tool), positional ? args : [args[0] ?? {}]);
  let target = {};
  if (factory !== null) {
    target = factory(call);
    if (target === null || (typeof target !== 'object' && typeof target !== 'function')) {
      throw new $TypeError(SETTINGS.proxySourceNotObject.replace('{name}', name));
    }
  }
  return new $Proxy(target, {
    get(object, key) {
      if ($hasOwn(object, key)) return object[key];
      // `then` too: a namespace is never a thenable, so `await ns` and `return ns` settle.
      if (typeof key !== 'string' || key === 'then') return undefined;
      return (...args) => call(key, ...args);
    },
  });
}

// ---- settling a run ----------------------------------------------------------------------------
function describeThrown(error) {
  try {
    if (error !== null && error !== undefined) {
      const message = error.message;
      if (message) return $String(message);
    }
  } catch {
    // A throwing getter or an unprintable message: fall back to the value itself.
  }
  try {
    return $String(error);
  } catch {
    return $apply($objectToString, error, []);
  }
}

const retainedFunctions = new $Map();
const handleIds = new $Map();

/** Replaces every function reachable through arrays and plain objects with a handle record. */
function retainFunctions(value, seen) {
  if (typeof value === 'function') {
    let id = handleIds.get(value);
    if (id === undefined) {
      id = $String(handleIds.size + 1);
      handleIds.set(value, id);
      retainedFunctions.set(id, value);
    }
    return { [SETTINGS.handleKey]: id };
  }
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return seen.get(value);
  if ($isArray(value)) {
    const out = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = retainFunctions(value[i], seen);
    return out;
  }
  const proto = $getPrototypeOf(value);
  if (proto !== $ObjectPrototype && proto !== null) return value;
  const out = {};
  seen.set(value, out);
  for (const key of $keys(value)) out[key] = retainFunctions(value[key], seen);
  return out;
}

async function settle(start, retain) {
  // A pending timer, as upstream's own timeout timer is: without one, workerd cancels a run that
  // awaits something that can never settle, with its own "hung" text, instead of letting the host's
  // bound end it.
  const keepAlive = $setTimeout(() => {}, 0x7fffffff);
  try {
    const value = await start();
    return { ok: true, value: retain ? retainFunctions(value, new $Map()) : value, logs };
  } catch (error) {
    return { ok: false, error: describeThrown(error), logs };
  } finally {
    $clearTimeout(keepAlive);
  }
}

/** Called by the generated entry module's `evaluate()`. */
export function evaluate(self, args, body) {
  bridge = args[0];
  return settle(() => $apply(body, self, []), args[1] === true);
}

/** The generated entry's base class: what the supervisor calls besides `evaluate`. */
export class Entrypoint extends WorkerEntrypoint {
  /** The lines captured so far, for a run the host gave up on. */
  logs() {
    return logs;
  }

  /** Calls a function a retained run returned. */
  invoke(handle, args, nextBridge) {
    const fn = retainedFunctions.get(handle);
    if (fn === undefined) return { missing: true };
    bridge = nextBridge;
    logs = [];
    return settle(() => $apply(fn, undefined, args), true);
  }
}
