/**
 * The sandbox side of one execution (the module contract/sandbox-constants.ts names `HARNESS_MODULE` in
 * every dynamic worker), bundled at build time (scripts/bundle-workers.ts).
 *
 * The generated entry module imports it first, under a name no program can write, ahead of any
 * user import, so it runs before user code: it captures the intrinsics it relies on (intrinsics.ts) and installs the
 * console capture. Its own state (logs, bridge, retained functions) lives in module scope, out of
 * user reach; a program that learns the module's name (from a stack frame) can import only the
 * frozen module namespace, whose exports guard themselves.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import { HANDLE_KEY } from '../../protocol/types.js';
import { captureConsole, capturedLogs, resetLogs, streamLines } from './console-capture.js';
import {
  $apply,
  $bind,
  $crypto,
  $get,
  $getPrototypeOf,
  $getRandomValues,
  $isArray,
  $keys,
  $Map,
  $Object,
  $ObjectPrototype,
  $objectToString,
  $Promise,
  $Proxy,
  $promiseResolve,
  $String,
  $then,
  $Uint8Array,
} from './intrinsics.js';
import {
  armRace,
  endRun,
  lastRunSettledBeforeDeadline,
  type RunInFlight,
  raceVerdict,
  runInFlight,
  startRun,
} from './run-race.js';
import { useBridge } from './tool-calls.js';
import type {
  EvaluateOptions,
  HandleMissing,
  InvokeOptions,
  RaceVerdict,
  SandboxBridge,
  SandboxOutcome,
} from './types.js';

export { namespace } from './tool-calls.js';

captureConsole();

/**
 * The run's error text: the thrown value's message when truthy, else its String form. A `message`
 * getter that throws fails the run with its own error instead, as upstream's read of
 * `err.message` does (a getter that keeps throwing is followed a few times, then printed).
 */
function describeThrown(error: unknown, depth = 0): string {
  if (error !== null && error !== undefined) {
    let message: unknown;
    try {
      message = $get($Object(error), 'message');
    } catch (getterError) {
      if (depth < 4) return describeThrown(getterError, depth + 1);
    }
    try {
      if (message) return $String(message);
    } catch {
      // An unprintable message: fall back to the value itself.
    }
  }
  try {
    return $String(error);
  } catch {
    return $apply($objectToString, error, []);
  }
}

/** A function a retained run returned, called through its handle. */
type RetainedFunction = (...args: unknown[]) => unknown;

/** handle id → the function it calls. */
const retainedFunctions: Map<string, RetainedFunction> = new $Map();
const handleIds: Map<RetainedFunction, string> = new $Map();

/** Replaces every function reachable through arrays and plain objects with a handle record. */
function retainFunctions(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value === 'function') {
    const fn = value as RetainedFunction;
    let id = handleIds.get(fn);
    if (id === undefined) {
      id = $String(handleIds.size + 1);
      handleIds.set(fn, id);
      retainedFunctions.set(id, fn);
    }
    return { [HANDLE_KEY]: id };
  }
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return seen.get(value);
  if ($isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = retainFunctions(value[i], seen);
    return out;
  }
  const proto = $getPrototypeOf(value);
  if (proto !== $ObjectPrototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const key of $keys(value)) out[key] = retainFunctions($get(value, key), seen);
  return out;
}

function succeeded(current: RunInFlight, value: unknown): SandboxOutcome {
  const settledBeforeDeadline = endRun(current);
  const kept = current.retain ? retainFunctions(value, new $Map()) : value;
  return { ok: true, value: kept, logs: capturedLogs(), settledBeforeDeadline };
}

function failed(current: RunInFlight, error: unknown): SandboxOutcome {
  const settledBeforeDeadline = endRun(current);
  return { ok: false, error: describeThrown(error), logs: capturedLogs(), settledBeforeDeadline };
}

/** The first `begin` wins: user code that calls it again (it can import the harness by name) changes nothing. */
let begun = false;

/**
 * The generated entry's `evaluate` calls this first, with its own `arguments`: the bridge and the
 * run's options, which stay here. User code then reads `arguments` as upstream's
 * `evaluate(__dispatchers, __connectors)` has them, two objects, and never sees the bridge.
 * `preludes`: the providers have preludes, which run before the race is armed.
 */
export function begin(args: IArguments, preludes = false): void {
  if (begun) return;
  const options: EvaluateOptions = args[1];
  // First, since it throws outside a request (a module's top level may not draw random values
  // nor set timers): a module that calls this before the entry does then changes nothing, and the
  // entry's own call still counts.
  $apply($getRandomValues, $crypto, [new $Uint8Array(1)]);
  startRun(options.run, options.bound, options.retain === true, preludes === true);
  begun = true;
  const bridge: SandboxBridge = args[0];
  useBridge(bridge);
  // Not awaited: the program starts now, and the host's clock with it.
  void bridge.started();
  streamLines(options.live === true ? bridge : null);
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
 */
export function raced(pending: unknown): Promise<unknown> {
  armRace(runInFlight());
  return new $Promise((resolve, reject) => {
    $apply($then, $apply($promiseResolve, $Promise, [pending]), [resolve, reject]);
  });
}

/** What the run ends with when the program returned `value`. */
export function returned(value: unknown): SandboxOutcome {
  return succeeded(runInFlight(), value);
}

/**
 * What the run ends with when the program threw, rejected, or never got to run (a namespace or a
 * prelude threw).
 */
export function threw(error: unknown): SandboxOutcome {
  return failed(runInFlight(), error);
}

/** What `waitUntil` does in a run: nothing. A run's work ends with its result. */
function ignoreWaitUntil() {}

/**
 * The run's `this.ctx`: the real context behind a Proxy whose `waitUntil` does nothing, so no
 * work outlives the result (a retained execution's worker stays loaded, and would otherwise keep
 * `waitUntil` work running between its calls). Its other methods are bound to the real context,
 * which user code never holds, so the native `waitUntil` cannot be called on it either.
 */
function withoutWaitUntil<Context extends object>(ctx: Context): Context {
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
  constructor(ctx: ExecutionContext<Record<never, never>>, env: Cloudflare.Env) {
    super(ctx, env);
    this.ctx = withoutWaitUntil(ctx);
  }

  /** The lines captured so far, and whether the last run ended in time (a fault's report). */
  snapshot() {
    return { logs: capturedLogs(), settledBeforeDeadline: lastRunSettledBeforeDeadline() };
  }

  /** The host gave up on `run`: the race's verdict (run-race.ts `raceVerdict`). */
  cancel(run: string, awaitRace: boolean): RaceVerdict | Promise<RaceVerdict> {
    return raceVerdict(run, awaitRace, capturedLogs);
  }

  /** Calls a function a retained run returned. */
  invoke(
    handle: string,
    args: unknown[],
    nextBridge: SandboxBridge,
    options: InvokeOptions,
  ): HandleMissing | SandboxOutcome | Promise<SandboxOutcome> {
    const fn = retainedFunctions.get(handle);
    if (fn === undefined) return { missing: true };
    useBridge(nextBridge);
    streamLines(options.live === true ? nextBridge : null);
    resetLogs();
    const current = startRun(options.run, options.bound, true, false);
    let pending: unknown;
    try {
      pending = $apply(fn, undefined, args);
    } catch (error) {
      return failed(current, error);
    }
    return $apply($then, raced(pending), [
      (value: unknown) => {
        try {
          return succeeded(current, value);
        } catch (error) {
          // Retaining what it returned threw (a getter of its own): the call failed.
          return failed(current, error);
        }
      },
      (error: unknown) => failed(current, error),
    ]);
  }
}
