/**
 * `@supolka/cloudflare-codemode-executor/protocol`: the native executor contract.
 * See docs/protocol.md.
 */
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
export {
  EXECUTOR_ERROR_CODES,
  ExecutionTimeoutError,
  ExecutorError,
  TIMEOUT_MESSAGE,
  ToolNotFoundError,
  formatToolNotFound,
  messageOf,
  rehydrateExecutorError,
} from './errors.js';
export type { ExecutorErrorCode, ExecutorErrorOptions } from './errors.js';
export { BINARY_CODEC_SOURCE, BINARY_TAG, binaryCodec, createBinaryCodec } from './codec.js';
export type { BinaryCodec } from './codec.js';
export {
  JAVASCRIPT_RESERVED_WORDS,
  PROVIDER_NAME_PATTERN,
  RESERVED_PROVIDER_NAMES,
  providerRejection,
  validateProviders,
} from './providers.js';
export {
  COMPLETED_MESSAGE,
  UNPRINTABLE_THROW_MESSAGE,
  createEnvelopeDispatch,
  encodeErrorEnvelope,
  encodeResultEnvelope,
  parseDispatchArguments,
} from './dispatch.js';
export type { CompletionGuard, ProviderHandler } from './dispatch.js';
export { separateImports } from './imports.js';
export type { SeparatedImports } from './imports.js';
export {
  FUNCTION_NOT_RETAINED_MESSAGE,
  VALUE_CODEC_SOURCE,
  createValueCodec,
  decodeValue,
  encodeValue,
} from './value-codec.js';
export type { ValueCodec } from './value-codec.js';
export { PROTOCOL_VERSION, assertProtocolCompatible, formatProtocolMismatch } from './version.js';
