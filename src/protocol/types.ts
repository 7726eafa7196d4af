/**
 * The native executor contract: what every native executor implements and what the
 * dialect adapter consumes. `docs/protocol.md` is the prose version of this file.
 */

import type { RunEnding } from './run-endings.js';

/** A log level the sandbox captures. These are the console methods the reference captures. */
export type LogLevel = 'log' | 'warn' | 'error';

/** One captured console line. The level travels in a field of its own; rendering is the caller's job. */
export interface LogEntry {
  level: LogLevel;
  /** The arguments, each converted with `String(x)`, joined with one space. */
  message: string;
}

/**
 * The host side of every tool call the sandbox makes.
 *
 * `argsJson` is the call's argument array, encoded with the binary codec (see `codec.ts`).
 * The returned string is an envelope, `{"result": value}` or `{"error": "message"}`, encoded the same way.
 */
export type Dispatch = (provider: string, tool: string, argsJson: string) => Promise<string>;

/**
 * A function that answers the sandbox's `fetch`. It receives a standard `Request` and returns a
 * standard `Response`; it runs on the host, outside the sandbox.
 */
export type OutboundFetch = (request: Request) => Response | Promise<Response>;

/** A module of the `modules` map: ES module source text, or one of workerd's module kinds. */
export type ModuleSource = string | { js: string } | { cjs: string } | { text: string } | { json: unknown };

/** One namespace in the sandbox scope. Only names and source cross; implementations stay with the host. */
export interface ProviderDescriptor {
  /** The identifier the namespace is bound to in the sandbox scope. */
  name: string;
  /** The tool identifiers the host declares. Informational: any string key dispatches. */
  tools: string[];
  /**
   * The argument convention. `true` (the default) sends every argument as an array, the
   * convention of `@cloudflare/codemode` 0.3.7 and later. `false` sends the first argument
   * alone, with `undefined` and `null` becoming `{}`, the convention of 0.2.2.
   */
  positionalArgs?: boolean | undefined;
  /**
   * Source of a function expression `(call) => object`, evaluated in the sandbox. `call(tool, ...args)`
   * dispatches to the host under the provider's convention. The own members of the returned object
   * are the namespace's own members; every other string key still dispatches by name.
   */
  proxySource?: string | undefined;
  /** Raw JavaScript, run in the entry scope after every namespace is bound, in provider order. */
  prelude?: string | undefined;
}

/** What one execution asks for. */
export interface ExecuteRequest {
  /** Static import declarations, then one arrow expression. Nothing rewrites it on the way in. */
  code: string;
  providers?: ProviderDescriptor[] | undefined;
  /** Required when `providers` is non-empty. Rides every request, even one with no providers. */
  dispatch?: Dispatch | null | undefined;
  /** Modules the code may import, statically or dynamically, by name. */
  modules?: Record<string, ModuleSource> | undefined;
  /** Milliseconds; `null` asks for the executor's maximum bound; `undefined` for its construction default. */
  timeout?: number | null | undefined;
  /**
   * Milliseconds of CPU time the run may spend, beside its wall-clock `timeout`; `undefined` takes
   * the executor's construction default (off unless the executor sets one). Time spent waiting for
   * a tool, a fetch or a free core does not count.
   */
  cpuTimeout?: number | undefined;
  /**
   * `false` (the default): the run clock stops while a tool call or an outbound request is in flight.
   * `true`: the clock is wall-clock time.
   */
  countHostWaits?: boolean | undefined;
  /** `undefined`: the construction default. `null`: blocked. A function: every sandbox `fetch` goes through it. */
  outbound?: OutboundFetch | null | undefined;
  /** Keep the functions the run returns callable through `invokeHandle`, keyed by the returned `executionId`. */
  retainHandles?: boolean | undefined;
  /**
   * Who the execution runs for. At IsolateExecutor's tenant level (`pool.runsPerMember` above 1)
   * executions of the same tenant may share a process, each in its own isolate; executions of
   * different tenants never do. An executor without that level ignores it. A daemon sets it from
   * its client's token.
   */
  tenant?: string | undefined;
}

/** What one execution produced. */
export interface ExecuteResult {
  /** The settled value of the arrow. `undefined` when the run failed. */
  result?: unknown;
  /** The failure, as text written for the model. Absent when the run succeeded. */
  error?: string;
  /**
   * How the executor ended the run, as data with a stable `code` (docs/protocol.md, How a run
   * ended), when it ended it: a bound, a cap, its process's end. Absent when the run settled with
   * its program's own outcome (a value, or what it threw). Match on its `code`, not on `error`.
   */
  ending?: RunEnding;
  logs: LogEntry[];
  /** Present when the request set `retainHandles` and the run succeeded. */
  executionId?: string;
}

/** A call of a function that a retained execution returned. */
export interface InvokeHandleRequest {
  executionId: string;
  /** The handle id, as found in the result under `HANDLE_KEY`. */
  handle: string;
  args?: unknown[] | undefined;
  /** Tool calls the handle makes are dispatched here. */
  dispatch?: Dispatch | null | undefined;
  timeout?: number | null | undefined;
  /** As on `ExecuteRequest`: the CPU time this call may spend. */
  cpuTimeout?: number | undefined;
  countHostWaits?: boolean | undefined;
}

/** Per-call options of `execute` and `invokeHandle`, beside the request (they never cross a wire as they are). */
export interface ExecutorCallOptions {
  /**
   * Aborting it gives the call up: the executor ends the run (releasing its sandbox) and the call
   * rejects with `EXECUTION_CANCELLED`. An executor that cannot cancel may ignore it.
   */
  signal?: AbortSignal | undefined;
  /**
   * Receives the run's live events, in order (docs/observing.md): `console`, `tool-call`,
   * `tool-result`, `fetch`, and `end` last. It never holds the run up: a returned promise is awaited
   * before the next event, and events past `maxQueuedEvents` meanwhile are dropped and counted.
   */
  onEvent?: OnRunEvent | undefined;
  /** How many events may wait while `onEvent` works on an earlier one. Default 1000, at most 100000. */
  maxQueuedEvents?: number | undefined;
  /**
   * The W3C `traceparent` of the caller's span in another process: the call's spans are its
   * children rather than those of this process's active span. A daemon passes its client's.
   */
  traceparent?: string | undefined;
}

/** The native executor. */
export interface Executor {
  /**
   * Set by an executor whose every run it ends carries `ending`. Without it (a native executor
   * written before `ending`), `CodemodeExecutor` still recognizes a timeout by its text
   * (`ExecutionTimeoutError.matches`), as it did before.
   */
  readonly reportsEndings?: true;
  execute(request: ExecuteRequest, options?: ExecutorCallOptions): Promise<ExecuteResult>;
  /** Calls a function a retained execution returned. Keyed on the pool, so any caller may call it. */
  invokeHandle(request: InvokeHandleRequest, options?: ExecutorCallOptions): Promise<ExecuteResult>;
  /** Releases everything a retained execution holds. Closing an unknown id is not an error. */
  closeHandles(executionId: string): Promise<void>;
  /** Ends every resource the executor owns. Later calls reject with `EXECUTOR_DISPOSED`. */
  dispose(): Promise<void>;
}

// ---- live events (schema/run-events.schema.json) ----------------------------------------------

/** The version of the event grammar; the schema's `schemaVersion`. */
export const RUN_EVENTS_SCHEMA_VERSION = 1;

interface EventBase {
  /** Milliseconds since the call began, on the caller's clock. */
  elapsedMs: number;
}

/** A console line of the run, as the sandbox captured it. */
export interface ConsoleEvent extends EventBase {
  type: 'console';
  level: LogLevel;
  text: string;
  /** The line's place among the run's console lines (its index in the result's `logs`). */
  index: number;
}

/** The sandbox called a tool. */
export interface ToolCallEvent extends EventBase {
  type: 'tool-call';
  /** The call's place among the run's tool calls, from 0 (its index in a run record's `calls`). */
  callId: number;
  provider: string;
  tool: string;
  /** The UTF-8 bytes of the argument array as the sandbox sent it. */
  argsBytes: number;
}

/** The host answered a tool call: `resultBytes` for a result, `error` for a failure. */
export interface ToolResultEvent extends EventBase {
  type: 'tool-result';
  callId: number;
  durationMs: number;
  /** The UTF-8 bytes of the answer's envelope, as sent back to the sandbox. */
  resultBytes?: number;
  /** The failure's text, as the sandbox receives it. */
  error?: string;
}

/** An outbound request of the sandbox's `fetch`, answered (`status`) or failed (`error`). */
export interface FetchEvent extends EventBase {
  type: 'fetch';
  method: string;
  /** The URL's origin (scheme, host, port): never its path, query or body. */
  origin: string;
  durationMs: number;
  status?: number;
  error?: string;
}

/** The call is over; always the last event. */
export interface EndEvent extends EventBase {
  type: 'end';
  /** `result`: the run settled with a value; `error`: with a failure text; `rejected`: the call itself rejected. */
  outcome: 'result' | 'error' | 'rejected';
  /** The run's failure text, or the rejection's message. */
  error?: string;
  /** The rejection's code (`EXECUTION_CANCELLED`, ...), when it has one. */
  code?: string;
  wallMs: number;
  /** The CPU time the run's process spent, where the executor can tell (IsolateExecutor on Linux). */
  cpuMs?: number;
  /** Events left out because the callback fell behind by more than `maxQueuedEvents`. */
  dropped: number;
}

export type RunEvent = ConsoleEvent | ToolCallEvent | ToolResultEvent | FetchEvent | EndEvent;

/** The host's callback. A returned promise is awaited before the next event is delivered. */
export type OnRunEvent = (event: RunEvent) => void | PromiseLike<void>;

/** The key under which a retained function appears in a result: `{ "__codemode_handle__": "<id>" }`. */
export const HANDLE_KEY = '__codemode_handle__';
