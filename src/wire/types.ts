/**
 * The grammar of the capnweb session between `RemoteExecutor` and the daemon. Shared by both ends.
 *
 * capnweb keeps a property set to `undefined` as a present key, so a wire object carries only the
 * fields the caller set; `null` is a value of its own (a `null` timeout asks for the maximum bound).
 * Functions (dispatch, outbound) cross as live stubs that call back over the same socket.
 */
import type { RunEnding } from '../protocol/run-endings.js';
import type { Dispatch, LogEntry, ModuleSource, ProviderDescriptor, RunEvent } from '../protocol/types.js';

/** The outbound tri-state of `ExecuteRequest.outbound`, spelled out, since the wire cannot tell an absent function from an undefined one. */
export type OutboundMode = 'default' | 'blocked' | 'stub';

/** A standard `Request` as plain data: capnweb cannot carry a `Request`. */
export interface WireFetchRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body: Uint8Array | null;
}

/** A standard `Response` as plain data. */
export interface WireFetchResponse {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Uint8Array | null;
}

export type WireFetch = (request: WireFetchRequest) => Promise<WireFetchResponse>;

/**
 * The client's sink for a call's events that happen in the daemon (console lines; fetches through
 * the daemon's own outbound). The daemon sends one batch at a time and waits for its answer before
 * the next: a client that stops reading holds at most `maxQueuedEvents` of the call in the daemon.
 */
export type WireEventSink = (events: RunEvent[]) => Promise<void> | void;

/** What a call that watches its events, or is traced, adds to its request. */
export interface WireEventTerms {
  /** The W3C `traceparent` of the client's span for the call: the daemon's spans are its children. */
  traceparent?: string;
  /** Present when the caller passed `onEvent`. */
  events?: WireEventSink;
  /** The caller's `maxQueuedEvents`: the daemon's queue for this call holds no more. */
  maxQueuedEvents?: number;
}

export interface WireExecuteRequest extends WireEventTerms {
  code: string;
  /** `null` when the request has no dispatch. */
  dispatch: Dispatch | null;
  outboundMode: OutboundMode;
  /** Present for `outboundMode: 'stub'` alone. */
  outbound?: WireFetch;
  providers?: ProviderDescriptor[];
  modules?: Record<string, ModuleSource>;
  /**
   * Modules named by hash (module-refs.ts), which the daemon holds for this tenant from an earlier
   * `putModules`; beside `modules`, never under the same name.
   */
  moduleRefs?: Record<string, string>;
  timeout?: number | null;
  cpuTimeout?: number;
  countHostWaits?: boolean;
  retainHandles?: boolean;
  /** Present when the caller passed a signal: `cancel(cancelToken)` aborts this call. */
  cancelToken?: string;
  /** The client's id for this call, unique among its calls on this connection. */
  callId?: string;
  /**
   * The `callId` of the client's call from inside whose tool call this one was sent (upstream's
   * `codemode.run`): the daemon runs it as a nested run of that execution, when that execution
   * runs on this connection with a tool call in flight, and ignores it otherwise.
   */
  parent?: string;
  /**
   * Milliseconds: the client counts the session broken when the daemon has not heard from it this
   * long while calls run (its heartbeat interval plus timeout). The daemon then cancels the
   * connection's calls itself, so nothing runs on after the client was told the connection broke.
   */
  heartbeatLease?: number;
}

export interface WireInvokeHandleRequest extends WireEventTerms {
  executionId: string;
  handle: string;
  /** The argument array, encoded with the value codec. */
  args?: unknown;
  dispatch: Dispatch | null;
  timeout?: number | null;
  cpuTimeout?: number;
  countHostWaits?: boolean;
  /** As on `WireExecuteRequest`. */
  cancelToken?: string;
  /** As on `WireExecuteRequest`. */
  callId?: string;
  /** As on `WireExecuteRequest`. */
  parent?: string;
  /** As on `WireExecuteRequest`. */
  heartbeatLease?: number;
}

/** `ExecuteResult` with `result` encoded by the value codec. */
export interface WireExecuteResult {
  result?: unknown;
  error?: string;
  /** How the executor ended the run, as data: it crosses as it is, beside its text. */
  ending?: RunEnding;
  logs: LogEntry[];
  executionId?: string;
}

/** The daemon's main RPC interface, one instance per connection. */
export interface ExecutorEndpoint {
  /** The version handshake: nothing else crosses before it. */
  protocolVersion(): number;
  /** The client's liveness probe; answers at once. */
  heartbeat(): boolean;
  execute(request: WireExecuteRequest): Promise<WireExecuteResult>;
  invokeHandle(request: WireInvokeHandleRequest): Promise<WireExecuteResult>;
  closeHandles(executionId: string): Promise<void>;
  /**
   * Aborts the signal of this connection's running call that carried `cancelToken` (an AbortSignal
   * cannot cross the wire). An unknown token, or one whose call has settled, is a no-op.
   */
  cancel(cancelToken: string): void;
  /** Of these module hashes, the ones the daemon does not hold for this connection's tenant. */
  missingModules(hashes: string[]): string[];
  /** Keeps modules for this connection's tenant, each under its hash, which the daemon checks. */
  putModules(modules: Record<string, ModuleSource>): Promise<void>;
}
