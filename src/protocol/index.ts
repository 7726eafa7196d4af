/**
 * `@supolka/cloudflare-codemode-executor/protocol`: the native executor contract.
 * See docs/protocol.md.
 */

export type { BinaryCodec } from './codec.js';
export { BINARY_CODEC_SOURCE, BINARY_TAG, binaryCodec, createBinaryCodec } from './codec.js';
export type { CompletionGuard, ProviderHandler } from './dispatch.js';
export {
  createEnvelopeDispatch,
  encodeErrorEnvelope,
  encodeResultEnvelope,
  parseDispatchArguments,
} from './dispatch.js';
export type { ExecutorErrorCode, ExecutorErrorOptions } from './errors.js';
export {
  EXECUTOR_ERROR_CODES,
  ExecutionTimeoutError,
  ExecutorError,
  rehydrateExecutorError,
  ToolNotFoundError,
} from './errors.js';
export type { SeparatedImports } from './imports.js';
export { separateImports } from './imports.js';
export { messageOf } from './message-of.js';
export {
  JAVASCRIPT_RESERVED_WORDS,
  PROVIDER_NAME_PATTERN,
  RESERVED_PROVIDER_NAMES,
  validateProviders,
} from './providers.js';
export type { RunEnding, RunEndingCode } from './run-endings.js';
export {
  COMPLETED_MESSAGE,
  cancellationText,
  FUNCTION_NOT_RETAINED_MESSAGE,
  formatCpuTimeout,
  formatProtocolMismatch,
  formatTimeout,
  formatToolNotFound,
  INERT_FUNCTION_TEXT,
  providerRejection,
  TIMEOUT_MESSAGE,
  UNPRINTABLE_THROW_MESSAGE,
} from './texts.js';
export type {
  Dispatch,
  ExecuteRequest,
  ExecuteResult,
  Executor,
  ExecutorCallOptions,
  InvokeHandleRequest,
  LogEntry,
  LogLevel,
  ModuleSource,
  OutboundFetch,
  ProviderDescriptor,
} from './types.js';
export { HANDLE_KEY } from './types.js';
export type { ValueCodec } from './value-codec.js';
export {
  createValueCodec,
  decodeValue,
  encodeValue,
  VALUE_CODEC_SOURCE,
} from './value-codec.js';
export { assertProtocolCompatible, PROTOCOL_VERSION } from './version.js';
