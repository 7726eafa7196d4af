// @ts-check
// The sandbox side of one execution (module "__codemode_harness.js" of every dynamic worker).
//
// The generated entry module imports it first, as `__codemode`, ahead of any user import, so it
// runs before user code: it captures the intrinsics it relies on and installs the console capture.
// Its own state (logs, bridge, retained functions) lives in this module's scope, out of user reach;
// user scope sees only the frozen module namespace `__codemode`.
//
// The two placeholders in capitals between double underscores (typed in worker.d.ts) are
// replaced when the supervisor config is built (sandbox-sources.ts).
import { WorkerEntrypoint } from 'cloudflare:workers';

/** @typedef {import('../../protocol/types.js').LogEntry} LogEntry */
/** @typedef {import('../../protocol/types.js').LogLevel} LogLevel */

const $Proxy = Proxy;
const $Promise = Promise;
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
const $now = Date.now;
const $get = Reflect.get;
const $bind = Function.prototype.bind;
const $Object = Object;
const $then = Promise.prototype.then;
const $promiseResolve = Promise.resolve;
/** V8's, which workerd's types leave out. @type {(target: object, below: Function) => void} */
const $captureStackTrace = $get(Error, 'captureStackTrace');
const $crypto = crypto;
const $getRandomValues = crypto.getRandomValues;
const $Uint8Array = Uint8Array;

const SETTINGS = __HARNESS_SETTINGS__;

// The protocol's binary codec, evaluated over captured intrinsics, so user code that replaces
// btoa or String on globalThis cannot break tool calls, nor can a provider named JSON, btoa or
// String (a namespace binding shadows only the program's scope). The parameters shadow the globals
// the codec's source names. JSON alone is read from globalThis at each call, as upstream's codec
// reads it: a program that replaces JSON.stringify (to carry BigInts, say) changes what its tool
// calls send, and a replaced JSON.parse what they receive. That reaches only the program's own
// run, since every run has a process of its own, and the host parses what it receives itself.
/** @type {(JSON: Pick<JSON, 'stringify' | 'parse'>, btoa: typeof globalThis.btoa, atob: typeof globalThis.atob, String: Pick<StringConstructor, 'fromCharCode'>, Array: Pick<ArrayConstructor, 'from' | 'isArray'>, ArrayBuffer: ArrayBufferConstructor, Uint8Array: Uint8ArrayConstructor) => import('../../protocol/codec.js').BinaryCodec} */
const codecOver = (JSON, btoa, atob, String, Array, ArrayBuffer, Uint8Array) => __BINARY_CODEC__();
const $globalThis = globalThis;
/** @param {'stringify' | 'parse'} method @param {unknown[]} args @returns {any} */
const callGlobalJson = (method, args) => {
  const json = $get($globalThis, 'JSON');
  return $apply($get(json, method), json, args);
};
const codec = codecOver(
  {
    stringify: (value, replacer) => callGlobalJson('stringify', [value, replacer]),
    parse: (text, reviver) => callGlobalJson('parse', [text, reviver]),
  },
  btoa,
  atob,
  { fromCharCode: String.fromCharCode },
  { from: Array.from, isArray: Array.isArray },
  ArrayBuffer,
  Uint8Array,
);

// ---- console capture: log, warn and error, the methods the reference captures ----------------
// The lines are capped (count and UTF-8 bytes, the executor's `limits.maxLogLines` and
// `limits.maxLogBytes`): past a cap one marker line says so, and later lines are dropped, so the
// result always has room to leave.
/** @type {LogEntry[]} */
let logs = [];
let logBytes = 0;
let logsCut = false;
/** The member's caps, baked into this source, so no program can change its own. */
const limits = __SANDBOX_LIMITS__;

const $encoder = new TextEncoder();
const $encode = TextEncoder.prototype.encode;
/** @param {string} text */
function utf8Bytes(text) {
  return $apply($encode, $encoder, [text]).byteLength;
}

/** @param {LogEntry} entry */
function keep(entry) {
  if (logsCut) return;
  const bytes = utf8Bytes(entry.message);
  if (logs.length >= limits.maxLogLines || logBytes + bytes > limits.maxLogBytes) {
    logsCut = true;
    logs[logs.length] = { level: 'warn', message: limits.logsCut };
    return;
  }
  logBytes += bytes;
  logs[logs.length] = entry;
}

function resetLogs() {
  logs = [];
  logBytes = 0;
  logsCut = false;
}

/**
 * The error with its stack taken again from the caller of `fn`, so no frame of this module shows
 * in what user code catches (upstream's own frames are in its generated module, which a stack of
 * ours cannot name). A value that is not an object is left as it is.
 * @template T
 * @param {T} error
 * @param {Function} fn
 * @returns {T}
 */
function fromCaller(error, fn) {
  if (error !== null && typeof error === 'object') {
    try {
      $captureStackTrace(error, fn);
    } catch {
      // A frozen or exotic object keeps the stack it has.
    }
  }
  return error;
}

// Arrows, as upstream writes them: no `prototype`, not constructible, no name, so the surface
// matches. Assigned to a property, so no name is inferred.
/** @param {LogLevel} level */
function capture(level) {
  /** @type {{fn: (...args: unknown[]) => void}} */
  const self = { fn: () => {} };
  self.fn = (...args) => {
    let message = '';
    try {
      // String(x) throws for a null-prototype object: that throw reaches user code, as upstream.
      for (let i = 0; i < args.length; i++) message += (i === 0 ? '' : ' ') + $String(args[i]);
    } catch (error) {
      throw fromCaller(error, self.fn);
    }
    keep({ level, message });
  };
  return self.fn;
}
console.log = capture('log');
console.warn = capture('warn');
console.error = capture('error');

// ---- tool calls --------------------------------------------------------------------------------
/** Set by every `evaluate` and `invoke` before user code can call a tool. @type {SandboxBridge} */
let bridge;

/**
 * The execution's tool calls waiting on the host, and the UTF-8 bytes of their arguments, which
 * the host holds until it answers: bounded by `limits.maxConcurrentToolCalls` and
 * `limits.maxConcurrentToolArgsBytes`.
 */
const waiting = { calls: 0, bytes: 0 };

/**
 * Sends one tool call: the arguments as codec JSON, checked against their cap and against what
 * the calls still waiting hold, before anything is sent, so the host never receives an argument
 * over them. Counts the call as waiting; `answered` ends that.
 * @param {string} provider
 * @param {string} tool
 * @param {unknown[]} args
 * @returns {{answer: Promise<string>, size: number}}
 */
function send(provider, tool, args) {
  const encoded = codec.stringify(args);
  // A program's own JSON.stringify may return anything; the host gets text, as upstream's host
  // makes text of whatever it is sent before parsing it.
  const argsJson = typeof encoded === 'string' ? encoded : $String(encoded);
  const size = utf8Bytes(argsJson);
  if (size > limits.maxToolArgsBytes) throw new $Error(limits.toolArgsTooLarge.replace('{size}', $String(size)));
  if (waiting.calls >= limits.maxConcurrentToolCalls) throw new $Error(limits.tooManyToolCalls);
  if (waiting.bytes + size > limits.maxConcurrentToolArgsBytes) {
    const text = limits.toolArgsInFlightTooLarge.replace('{size}', $String(size));
    throw new $Error(text.replace('{held}', $String(waiting.bytes)));
  }
  const answer = bridge.call(provider, tool, argsJson);
  waiting.calls += 1;
  waiting.bytes += size;
  return { answer, size };
}

/** @param {number} size */
function answered(size) {
  waiting.calls -= 1;
  waiting.bytes -= size;
}

/**
 * What the sandbox makes of an answer's envelope: its result, or a throw of its error.
 * @param {string} envelopeJson
 */
function readEnvelope(envelopeJson) {
  const envelope = codec.parse(envelopeJson);
  if (envelope !== null && typeof envelope === 'object') {
    if ('error' in envelope && envelope.error) throw new $Error($String(envelope.error));
    return 'result' in envelope ? envelope.result : undefined;
  }
  return undefined;
}

/**
 * One tool of one namespace, shaped as upstream's: an anonymous async arrow that awaits the answer
 * once, so a call settles in the same microtask turn as upstream's and `constructor.name` is
 * `AsyncFunction`. A throw carries the caller's stack, not this module's frames.
 * @param {string} provider
 * @param {string} tool
 * @param {boolean} positional
 */
function toolFunction(provider, tool, positional) {
  /** @type {{fn: (...args: unknown[]) => Promise<unknown>}} */
  const self = { fn: async () => undefined };
  self.fn = async (...args) => {
    /** @type {{answer: Promise<string>, size: number} | undefined} */
    let sent;
    try {
      sent = send(provider, tool, positional ? args : [args[0] ?? {}]);
      return readEnvelope(await sent.answer);
    } catch (error) {
      throw fromCaller(error, self.fn);
    } finally {
      if (sent !== undefined) answered(sent.size);
    }
  };
  return self.fn;
}

/**
 * One provider namespace: own members first, then every other string key dispatches by name.
 * @param {string} name
 * @param {boolean} positional
 * @param {((call: (tool: unknown, ...args: unknown[]) => Promise<unknown>) => unknown) | null} factory
 */
export function namespace(name, positional, factory) {
  /** @type {(tool: unknown, ...args: unknown[]) => Promise<unknown>} */
  const call = (tool, ...args) => toolFunction(name, $String(tool), positional)(...args);
  /** @type {object} */
  let target = {};
  if (factory !== null) {
    const made = factory(call);
    if (made === null || (typeof made !== 'object' && typeof made !== 'function')) {
      throw new $TypeError(SETTINGS.proxySourceNotObject.replace('{name}', name));
    }
    target = made;
  }
  return new $Proxy(target, {
    get(object, key) {
      if ($hasOwn(object, key)) return $get(object, key);
      // `then` too: a namespace is never a thenable, so `await ns` and `return ns` settle.
      if (typeof key !== 'string' || key === 'then') return undefined;
      return toolFunction(name, key, positional);
    },
  });
}

// ---- settling a run ----------------------------------------------------------------------------
/** @param {unknown} error */
function describeThrown(error) {
  try {
    if (error !== null && error !== undefined) {
      const message = $get($Object(error), 'message');
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

/** handle id → the function it calls. @type {Map<string, Function>} */
const retainedFunctions = new $Map();
/** @type {Map<Function, string>} */
const handleIds = new $Map();

/**
 * Replaces every function reachable through arrays and plain objects with a handle record.
 * @param {unknown} value
 * @param {Map<object, unknown>} seen
 * @returns {unknown}
 */
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
    /** @type {unknown[]} */
    const out = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = retainFunctions(value[i], seen);
    return out;
  }
  const proto = $getPrototypeOf(value);
  if (proto !== $ObjectPrototype && proto !== null) return value;
  /** @type {Record<string, unknown>} */
  const out = {};
  seen.set(value, out);
  for (const key of $keys(value)) out[key] = retainFunctions($get(value, key), seen);
  return out;
}

// ---- the race: upstream's timeout, as a proof that a run won ----------------------------------
// Upstream races the user call against a setTimeout(bound) armed after the call's synchronous
// prefix, the user call first. The host's clock (which may pause for host waits) decides a loss;
// this race only proves a win: a run that settled in time by the sandbox's clock is in time even
// when the host's clock, started earlier at hand-off, has already expired. So a run that settles
// on microtasks alone wins even a bound of 0, as it does upstream. One run at a time per worker.
//
// The clock decides, not the timer: user code can clear any timer by guessing its id, so a run
// wins only if it settled before the timer fired and no later than its deadline by `Date.now()`
// (which advances in real time here), give or take CLOCK_SLACK_MS for the clock's granularity.
//
// The program can call `raced`, `returned` and `threw` itself (they are exports of `__codemode`).
// So the first `raced` arms the race and no later call moves its deadline (an early one only
// brings it closer), and what a run reports as in time (`inTime`) is read from the clock by the
// very call that settles it, the entry's, never from a decision an earlier call made. A forged
// early win can then only make `cancel` wait for the run's own reply, which says it was late.
// The decision is not taken by a reaction on the program's promise: a second reaction there
// would end V8's async stack at the program's frame.

/**
 * @typedef {object} Race
 * @property {string} run
 * @property {boolean | undefined} won Undecided while undefined.
 * @property {boolean} timerFired
 * @property {number} deadline When the run's bound is up (`Date.now()`); Infinity until armed.
 * @property {boolean} armed
 * @property {boolean | undefined} settledInTime What the latest settling call read from the clock.
 */

/** @type {Race | null} */
let race = null;
const CLOCK_SLACK_MS = 10;
/** How long a cancel() that arrived before its run started waits for it, polling (ms). */
const EARLY_CANCEL_POLL_MS = 1;
const EARLY_CANCEL_WAIT_MS = 1000;

/**
 * @param {Race} current
 * @returns {RaceVerdict}
 */
function verdictOf(current) {
  return current.won ? { won: true } : { won: false, logs };
}

/** @param {string} run */
function beginRace(run) {
  /** @type {Race} */
  const current = {
    run,
    won: undefined,
    timerFired: false,
    deadline: Infinity,
    armed: false,
    settledInTime: undefined,
  };
  race = current;
  return current;
}

/**
 * @param {Race} current
 * @param {boolean} won
 */
function decide(current, won) {
  if (current.won === undefined) current.won = won;
}

/**
 * The run settles now: whether that is in time, by the clock, whatever an earlier call decided.
 * @param {Race} current
 * @returns {boolean}
 */
function decideSettled(current) {
  const inTime = !current.timerFired && $now() <= current.deadline + CLOCK_SLACK_MS;
  decide(current, inTime);
  current.settledInTime = inTime;
  return inTime;
}

/**
 * Resolves with the verdict once the race is decided: when the run settles, or once the clock is
 * past its deadline. workerd cancels the continuations of a promise resolved from another
 * request's context (the run's), so only this call's own timers resolve it.
 * @param {Race} current
 * @param {(verdict: RaceVerdict) => void} resolve
 */
function awaitVerdict(current, resolve) {
  const late = current.deadline + CLOCK_SLACK_MS - $now();
  if (current.won === undefined && late < 0) decide(current, false);
  if (current.won !== undefined) {
    resolve(verdictOf(current));
    return;
  }
  $setTimeout(() => awaitVerdict(current, resolve), late > 1 && late !== Infinity ? late + 1 : 1);
}

/**
 * The run in flight: its race, its timers, and whether a success retains what it returned.
 * @typedef {object} Settling
 * @property {Race} race
 * @property {number} bound
 * @property {boolean} retain
 * @property {ReturnType<typeof setTimeout> | undefined} keepAlive
 * @property {ReturnType<typeof setTimeout> | undefined} timer
 */

/** @type {Settling | null} */
let settling = null;
/** The first `begin` wins: user code that calls it again (it can reach `__codemode`) changes nothing. */
let begun = false;

/** A timer that never fires: while one is pending, workerd does not cancel the run as hung. */
const holdRequest = () => $setTimeout(() => {}, 0x7fffffff);

/**
 * A run always has a pending timer, as upstream's has its timeout timer: without one, workerd
 * cancels a run that awaits something that can never settle, with its own "hung" text, instead of
 * letting the host's bound end it. The race timer is that timer, and a holding one replaces it once
 * it fires. Only preludes, which may await before the race is armed, need a holding timer from the
 * start (`hold`). Otherwise none is made before the program runs, so the program's first timer has
 * id 1, as upstream's does.
 * @param {string} run
 * @param {number} bound
 * @param {boolean} retain
 * @param {boolean} hold
 * @returns {Settling}
 */
function startRun(run, bound, retain, hold) {
  settling = {
    race: beginRace(run),
    bound,
    retain,
    keepAlive: hold ? holdRequest() : undefined,
    timer: undefined,
  };
  return settling;
}

/**
 * Arms the race timer: after the program's synchronous prefix, as upstream arms its own.
 * @param {Settling} current
 */
function arm(current) {
  const state = current.race;
  if (state.armed) return;
  state.armed = true;
  state.deadline = $now() + current.bound;
  current.timer = $setTimeout(() => {
    state.timerFired = true;
    decide(state, false);
    if (settling === current) current.keepAlive ??= holdRequest();
  }, current.bound);
}

/** @param {Settling} current */
function endRun(current) {
  if (current.timer !== undefined) $clearTimeout(current.timer);
  if (current.keepAlive !== undefined) $clearTimeout(current.keepAlive);
}

/**
 * @param {Settling} current
 * @param {unknown} value
 * @returns {SettledRun}
 */
function succeeded(current, value) {
  const inTime = decideSettled(current.race);
  endRun(current);
  const kept = current.retain ? retainFunctions(value, new $Map()) : value;
  return { ok: true, value: kept, logs, inTime };
}

/**
 * @param {Settling} current
 * @param {unknown} error
 * @returns {SettledRun}
 */
function failed(current, error) {
  const inTime = decideSettled(current.race);
  endRun(current);
  return { ok: false, error: describeThrown(error), logs, inTime };
}

/**
 * The generated entry's `evaluate` calls this first, with its own `arguments`: the bridge and the
 * run's options, which stay here. User code then reads `arguments` as upstream's
 * `evaluate(__dispatchers, __connectors)` has them, two objects, and never sees the bridge.
 * @param {IArguments} args
 * @param {boolean} [preludes] The providers have preludes, which run before the race is armed.
 */
export function begin(args, preludes = false) {
  if (begun) return;
  /** @type {{run: string, bound: number, retain?: boolean}} */
  const options = args[1];
  // First, since it throws outside a request (a module's top level may not draw random values
  // nor set timers): a module that calls this before the entry does then changes nothing, and the
  // entry's own call still counts.
  $apply($getRandomValues, $crypto, [new $Uint8Array(1)]);
  startRun(options.run, options.bound, options.retain === true, preludes === true);
  begun = true;
  bridge = args[0];
  args[0] = {};
  args[1] = {};
}

/**
 * The program's value (its promise, usually) raced as upstream races it, `await
 * Promise.race([arrow(), timer])`: `Promise.resolve` of it, whose `then` settles the promise the
 * entry awaits with that promise's own resolve functions. So the entry resumes in the microtask
 * turn upstream's does (a continuation the program left running gets as many turns before the
 * result and the lines are read), and V8 follows the chain to the entry's frame in an async stack.
 * The timer is armed here, after the program's synchronous prefix, as upstream arms its own.
 * @param {unknown} pending
 * @returns {Promise<unknown>}
 */
export function raced(pending) {
  const current = /** @type {Settling} */ (settling);
  arm(current);
  return new $Promise((resolve, reject) => {
    $apply($then, $apply($promiseResolve, $Promise, [pending]), [resolve, reject]);
  });
}

/**
 * What the run settles with when the program returned `value`.
 * @param {unknown} value
 * @returns {SettledRun}
 */
export function returned(value) {
  return succeeded(/** @type {Settling} */ (settling), value);
}

/**
 * What the run settles with when the program threw, rejected, or never got to run (a namespace or
 * a prelude threw).
 * @param {unknown} error
 * @returns {SettledRun}
 */
export function threw(error) {
  return failed(/** @type {Settling} */ (settling), error);
}

/** What `waitUntil` does in a run: nothing. A run's work ends with its result. */
function ignoreWaitUntil() {}

/**
 * The run's `this.ctx`: the real context behind a Proxy whose `waitUntil` does nothing, so no
 * work outlives the result (a retained execution's worker stays loaded, and would otherwise keep
 * `waitUntil` work running between its calls). Its other methods are bound to the real context,
 * which user code never holds, so the native `waitUntil` cannot be called on it either.
 * @param {ExecutionContext} ctx
 * @returns {ExecutionContext}
 */
function withoutWaitUntil(ctx) {
  return new $Proxy(ctx, {
    get(target, key) {
      if (key === 'waitUntil') return ignoreWaitUntil;
      const value = $get(target, key);
      return typeof value === 'function' ? $apply($bind, value, [target]) : value;
    },
  });
}

/** The generated entry's base class: what the supervisor calls besides `evaluate`. */
export class Entrypoint extends WorkerEntrypoint {
  /**
   * @param {ExecutionContext} ctx
   * @param {Cloudflare.Env} env
   */
  constructor(ctx, env) {
    super(ctx, env);
    this.ctx = withoutWaitUntil(ctx);
  }

  /** The lines captured so far, and whether the last run settled in time (a fault's report). */
  snapshot() {
    return { logs, inTime: race === null || (race.won !== false && race.settledInTime !== false) };
  }

  /**
   * The host gave up on `run`: {won: true} when it settled in time (its own reply follows), else
   * {won: false, logs}. With `awaitRace` (a timeout) it answers once the race is decided, which is
   * at most the time the sandbox's clock started after the host's; otherwise (an abort) at once.
   * @param {string} run
   * @param {boolean} awaitRace
   * @returns {RaceVerdict | Promise<RaceVerdict>}
   */
  cancel(run, awaitRace) {
    const current = race !== null && race.run === run ? race : null;
    if (current !== null && current.won !== undefined) return verdictOf(current);
    if (!awaitRace) return { won: false, logs };
    return new $Promise((resolve) => {
      if (current !== null) {
        awaitVerdict(current, resolve);
        return;
      }
      // The calls crossed: the run has not started here yet. Poll for it, for a while; a run that
      // never starts here reports through its own reply, so giving up sends nothing.
      let waited = 0;
      const poll = () => {
        if (race !== null && race.run === run) awaitVerdict(race, resolve);
        else if ((waited += EARLY_CANCEL_POLL_MS) > EARLY_CANCEL_WAIT_MS) resolve({ won: true });
        else $setTimeout(poll, EARLY_CANCEL_POLL_MS);
      };
      poll();
    });
  }

  /**
   * Calls a function a retained run returned.
   * @param {string} handle
   * @param {unknown[]} args
   * @param {SandboxBridge} nextBridge
   * @param {{run: string, bound: number}} options
   * @returns {{missing: true} | SettledRun | Promise<SettledRun>}
   */
  invoke(handle, args, nextBridge, options) {
    const fn = retainedFunctions.get(handle);
    if (fn === undefined) return { missing: true };
    bridge = nextBridge;
    resetLogs();
    const current = startRun(options.run, options.bound, true, false);
    /** @type {unknown} */
    let pending;
    try {
      pending = $apply(fn, undefined, args);
    } catch (error) {
      return failed(current, error);
    }
    return $apply($then, raced(pending), [
      (/** @type {unknown} */ value) => {
        try {
          return succeeded(current, value);
        } catch (error) {
          // Retaining what it returned threw (a getter of its own): the call failed.
          return failed(current, error);
        }
      },
      (/** @type {unknown} */ error) => failed(current, error),
    ]);
  }
}
