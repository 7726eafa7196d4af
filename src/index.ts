/**
 * `@supolka/cloudflare-codemode-executor`: the `@cloudflare/codemode` dialect over any native
 * executor. See docs/dialect.md.
 *
 * This entry reaches no Node built-in and no Node-only package, so it bundles for a Worker
 * without `nodejs_compat` (test/root-entry.test.ts holds it to that). Node-only code lives behind
 * `./isolate` and `./server`; the native contract alone is `./protocol`.
 */

// The dialect adapter.
export { CodemodeExecutor, type CodemodeExecutorOptions } from './codemode/codemode-executor.js';
export { normalizeCode } from './codemode/normalize.js';
export { sanitizeToolName } from './codemode/tool-name.js';
export type {
  CodemodeExecuteResult,
  ConnectorBinding,
  DialectProvider,
  ExtendedExecuteOptions,
  ExtendedProvider,
  ToolFunction,
} from './codemode/types.js';
// Live events (docs/observing.md): the call options `onEvent` and `maxQueuedEvents`.
export { DEFAULT_MAX_QUEUED_EVENTS } from './events/options.js';
export { TANSTACK_CODE_MODE_EVENTS, type TanStackEmit, tanStackCodeModeEvents } from './events/tanstack.js';
export type { ExecutorErrorCode, ExecutorErrorOptions } from './protocol/errors.js';
export { ExecutionTimeoutError, ExecutorError, ToolNotFoundError } from './protocol/errors.js';
export type { RunEnding, RunEndingCode } from './protocol/run-endings.js';
// The native contract a host meets through the adapter: what it wraps, and what it may catch.
export type {
  ConsoleEvent,
  Dispatch,
  EndEvent,
  ExecuteRequest,
  ExecuteResult,
  Executor,
  ExecutorCallOptions,
  FetchEvent,
  InvokeHandleRequest,
  LogEntry,
  LogLevel,
  ModuleSource,
  OnRunEvent,
  OutboundFetch,
  ProviderDescriptor,
  RunEvent,
  ToolCallEvent,
  ToolResultEvent,
} from './protocol/types.js';
export { RUN_EVENTS_SCHEMA_VERSION } from './protocol/types.js';
// Run records and replay (docs/observing.md): above any native executor, on the caller's side.
export { DEFAULT_MAX_RECORD_BYTES } from './record/record-options.js';
export { type RunRecording, recordExecution, startRecording } from './record/recorder.js';
export { replay } from './record/replay.js';
export type {
  RecordedCall,
  RecordedOutcome,
  RecordedRequest,
  RecordedValue,
  RecordOptions,
  RecordTruncation,
  ReplayComparison,
  ReplayDivergence,
  ReplayedCall,
  ReplayOptions,
  RunRecord,
} from './record/types.js';
export { RUN_RECORD_FORMAT, RUN_RECORD_SCHEMA_VERSION } from './record/types.js';
export type { ConnectOptions, WebSocketConstructor, WebSocketLike } from './remote/index.js';
// The remote client: a native executor over a capnweb WebSocket to a daemon.
export { connect, RemoteExecutor } from './remote/index.js';
