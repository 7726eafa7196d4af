/**
 * The typed errors of the native contract. Class identity does not survive a wire crossing
 * (capnweb rebuilds only the standard classes), so every error carries its discriminator in
 * `code`, and `rehydrateExecutorError` rebuilds the class on the far side.
 */
import { formatTimeout, formatToolNotFound, TIMEOUT_FIRST_SENTENCE } from './texts.js';

export const EXECUTOR_ERROR_CODES = [
  /** The connection was refused: bad token, handshake failure, unusable options. */
  'CONNECTION_REJECTED',
  /** The two sides speak different protocol versions. Never heals by retrying. */
  'PROTOCOL_MISMATCH',
  /** The connection broke; `retryable` says whether a new call may succeed. */
  'CONNECTION_BROKEN',
  /** The request or an option is malformed. */
  'INVALID_REQUEST',
  /** The pool's queue is full. */
  'QUEUE_FULL',
  /** A server-side bound was passed: message size, concurrent executions. */
  'LIMIT_EXCEEDED',
  /** The executor was disposed. */
  'EXECUTOR_DISPOSED',
  /** The sandbox runtime could not be started. */
  'SANDBOX_UNAVAILABLE',
  /** No retained execution, or no handle, under that id. */
  'HANDLE_NOT_FOUND',
  /** A tool call named a tool no handler knows. */
  'TOOL_NOT_FOUND',
  /** The run passed its bound. */
  'EXECUTION_TIMEOUT',
  /** The caller aborted the call through its `signal` before it settled. */
  'EXECUTION_CANCELLED',
] as const;

export type ExecutorErrorCode = (typeof EXECUTOR_ERROR_CODES)[number];

export interface ExecutorErrorOptions {
  retryable?: boolean;
  cause?: unknown;
}

export class ExecutorError extends Error {
  override name = 'ExecutorError';
  readonly code: ExecutorErrorCode;
  readonly retryable: boolean;

  constructor(code: ExecutorErrorCode, message: string, options: ExecutorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

export class ToolNotFoundError extends ExecutorError {
  override name = 'ToolNotFoundError';
  readonly tool: string;

  constructor(tool: string) {
    super('TOOL_NOT_FOUND', formatToolNotFound(tool));
    this.tool = tool;
  }
}

export class ExecutionTimeoutError extends ExecutorError {
  override name = 'ExecutionTimeoutError';
  readonly timeout: number;

  constructor(timeout: number) {
    super('EXECUTION_TIMEOUT', ExecutionTimeoutError.format(timeout));
    this.timeout = timeout;
  }

  /** The native failure text, written for the model that reads it. */
  static format(timeout: number): string {
    return formatTimeout(timeout);
  }

  /**
   * Whether a message reads as a native timeout. It tests the whole first sentence, so a program's
   * own `Execution timed out waiting for the vendor API` is not mistaken for one.
   *
   * @deprecated Nothing in this package reads a timeout back from its text any more, since a
   * program may write the same words: a result carries `ending.code === 'EXECUTION_TIMEOUT'`, and
   * a rejection `code === 'EXECUTION_TIMEOUT'` with its `timeout` field. Kept for callers of
   * earlier releases.
   */
  static matches(message: unknown): boolean {
    return typeof message === 'string' && TIMEOUT_FIRST_SENTENCE.test(message);
  }
}

function isExecutorErrorCode(code: unknown): code is ExecutorErrorCode {
  return typeof code === 'string' && (EXECUTOR_ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Rebuilds the typed error from the `code` that crossed a wire, and from the fields that crossed
 * with it (`tool`, `timeout`), never from its message. A failure with no recognized code passes
 * through untouched, so a provider's own rejection keeps its shape.
 */
export function rehydrateExecutorError(error: unknown): unknown {
  if (error instanceof ExecutorError) return error;
  if (typeof error !== 'object' || error === null) return error;
  const { code, message, retryable } = error as { code?: unknown; message?: unknown; retryable?: unknown };
  if (!isExecutorErrorCode(code)) return error;
  const text = typeof message === 'string' ? message : String(message);
  const { tool, timeout } = error as { tool?: unknown; timeout?: unknown };
  if (code === 'TOOL_NOT_FOUND' && typeof tool === 'string') return new ToolNotFoundError(tool);
  if (code === 'EXECUTION_TIMEOUT' && typeof timeout === 'number' && Number.isFinite(timeout))
    return new ExecutionTimeoutError(timeout);
  return new ExecutorError(code, text, { retryable: retryable === true, cause: error });
}
