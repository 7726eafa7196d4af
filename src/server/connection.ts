/**
 * One client connection: its bound on concurrent executions, the log line of each execution, and
 * the cancellation of a running call, by the client (through its cancel token) or because the
 * client went away.
 */
import { ExecutorError } from '../protocol/errors.js';
import type { ExecuteResult, Executor } from '../protocol/types.js';
import { resultToWire } from '../wire/results.js';
import type { WireExecuteResult } from '../wire/types.js';
import type { RetainedOutbounds } from './retained-outbounds.js';
import {
  type ExecutionKind,
  formatConnectionClosed,
  formatDuplicateCancelToken,
  formatExecutionCancelled,
  formatExecutionSettled,
  formatInvalidCancelToken,
  formatTooManyExecutions,
  SHUTTING_DOWN,
} from './texts.js';

/** What every connection shares with the server. */
export interface ServerContext {
  readonly executor: Executor;
  readonly protocolVersion: number;
  readonly maxExecutionsPerConnection: number;
  readonly retained: RetainedOutbounds;
  readonly draining: boolean;
  log(line: string): void;
  /** Counts an execution in flight for the drain; the returned function settles it. */
  track(): () => void;
}

interface Running {
  execution: number;
  kind: ExecutionKind;
  /** Aborted by the client's `cancel(token)`, or when the client goes away. */
  controller: AbortController;
  /** The client went away: the cancellation line stands in for the settled one. */
  gone: boolean;
}

export class Connection {
  readonly id: number;
  readonly server: ServerContext;
  #executions = 0;
  readonly #running = new Set<Running>();
  /** Running calls the client may cancel, by the token it chose; tokens are per connection. */
  readonly #byCancelToken = new Map<string, Running>();
  #ended = false;

  constructor(id: number, server: ServerContext) {
    this.id = id;
    this.server = server;
  }

  /**
   * Runs one execution under the connection's bounds. `signal` aborts when the client cancels the
   * call through `cancelToken` or goes away; an executor that takes it as
   * `execute(request, { signal })` can release the sandbox at once. Registration is synchronous, so
   * a `cancel` that follows the call on the socket finds it.
   */
  async run(
    kind: ExecutionKind,
    cancelToken: unknown,
    body: (signal: AbortSignal) => Promise<ExecuteResult>,
  ): Promise<WireExecuteResult> {
    if (cancelToken !== undefined && (typeof cancelToken !== 'string' || cancelToken === '')) {
      throw new ExecutorError('INVALID_REQUEST', formatInvalidCancelToken(cancelToken));
    }
    if (cancelToken !== undefined && this.#byCancelToken.has(cancelToken)) {
      throw new ExecutorError('INVALID_REQUEST', formatDuplicateCancelToken(cancelToken));
    }
    if (this.server.draining) throw new ExecutorError('EXECUTOR_DISPOSED', SHUTTING_DOWN, { retryable: true });
    const limit = this.server.maxExecutionsPerConnection;
    if (this.#running.size >= limit) throw new ExecutorError('LIMIT_EXCEEDED', formatTooManyExecutions(limit));
    this.#executions += 1;
    const running: Running = { execution: this.#executions, kind, controller: new AbortController(), gone: false };
    this.#running.add(running);
    if (cancelToken !== undefined) this.#byCancelToken.set(cancelToken, running);
    const settle = this.server.track();
    const started = Date.now();
    let outcome = 'threw';
    try {
      const result = await body(running.controller.signal);
      outcome = result.error === undefined ? 'ok' : 'returned an error';
      return resultToWire(result);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      outcome = typeof code === 'string' ? `threw ${code}` : 'threw';
      throw error;
    } finally {
      this.#running.delete(running);
      if (cancelToken !== undefined) this.#byCancelToken.delete(cancelToken);
      settle();
      if (!running.gone) {
        this.server.log(formatExecutionSettled(this.id, running.execution, kind, outcome, Date.now() - started));
      }
    }
  }

  /** The client gave up the call it sent with this token. An unknown (or settled) token is a no-op. */
  cancel(cancelToken: unknown): void {
    if (typeof cancelToken !== 'string') return;
    this.#byCancelToken.get(cancelToken)?.controller.abort();
  }

  /** The client is gone: cancel what still runs, release what it kept. Idempotent. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const running of this.#running) {
      running.gone = true;
      this.server.log(formatExecutionCancelled(this.id, running.execution, running.kind));
      running.controller.abort();
    }
    this.server.retained.releaseConnection(this.id);
    this.server.log(formatConnectionClosed(this.id, this.#executions));
  }
}
