/**
 * Values sent across RPC, the same source text evaluated in workerd (a service binding's
 * entrypoint) and in Node (a facet of the durable state): what arrives, or what is refused, must
 * be the same. `RpcTarget` is in scope for each probe.
 */
export const PROBES: Record<string, string> = {
  number: '42',
  string: '"text"',
  boolean: 'true',
  bigint: '5n',
  undefinedValue: 'undefined',
  nullValue: 'null',
  sparseArray: '[1, , 3]',
  nested: '({ a: [1, { b: "c" }], d: null })',
  sharedReference: '(() => { const shared = { x: 1 }; return { one: shared, two: shared }; })()',
  map: 'new Map([[1, "one"]])',
  set: 'new Set([1, 2])',
  date: 'new Date(0)',
  regexp: '/a+b/gi',
  arrayBuffer: 'new Uint8Array([1, 2, 3]).buffer',
  typedArray: 'new Uint16Array([1, 2])',
  error: 'new TypeError("boom")',
  classInstance: 'new (class Foo { constructor() { this.a = 1; } })()',
  symbol: 'Symbol("x")',
  weakMap: 'new WeakMap()',
  promise: 'Promise.resolve(1)',
  functionValue: '(x) => x * 2',
  objectWithMethod: '({ f() { return 1; } })',
  rpcTarget: 'new (class Bar extends RpcTarget { hi() { return "hi"; } })()',
};

/** What the receiving side reports about a value; the same function runs on both sides. */
export const DESCRIBE_SOURCE = `async function describeArrival(x) {
  const seen = { type: typeof x };
  if (x === null || (typeof x !== 'object' && typeof x !== 'function')) {
    seen.value = typeof x === 'bigint' ? String(x) + 'n' : x === undefined ? 'undefined' : x;
    return seen;
  }
  seen.proto = Object.getPrototypeOf(x)?.constructor?.name ?? null;
  if (typeof x === 'function' && seen.proto !== 'RpcStub') {
    const called = x(2);
    seen.callReturnsPromise = called instanceof Promise;
    seen.called = await called;
    return seen;
  }
  if (seen.proto === 'RpcStub') {
    seen.hi = await x.hi();
    return seen;
  }
  if (Array.isArray(x)) seen.holes = [...x.keys()].filter((i) => !(i in x));
  if (x instanceof Map || x instanceof Set) seen.entries = JSON.stringify([...x]);
  if (x instanceof Date) seen.time = x.getTime();
  if (x instanceof RegExp) seen.regexp = String(x);
  if (x instanceof ArrayBuffer) seen.bytes = [...new Uint8Array(x)];
  if (ArrayBuffer.isView(x)) seen.view = [...x];
  if (x instanceof Error) seen.error = x.name + ': ' + x.message;
  if (x.one && x.two) seen.sameObject = x.one === x.two;
  if (typeof x.f === 'function') {
    seen.methodType = typeof x.f;
    seen.method = await x.f();
  }
  seen.json = JSON.stringify(x);
  return seen;
}`;

/** What the sending side reports: the arrival, or the error the call rejected (or threw) with. */
export const SEND_SOURCE = `async function sendProbe(call, value) {
  let pending;
  try {
    pending = call(value);
  } catch (error) {
    return { threw: error.name + ': ' + error.message };
  }
  try {
    return await pending;
  } catch (error) {
    return { rejected: error.name + ': ' + error.message };
  }
}`;
