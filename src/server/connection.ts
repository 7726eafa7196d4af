/**
 * One client connection: its bound on concurrent executions, the log line of each execution, and
 * the cancellation of whatever is still running when the client goes away.
 */
import { ExecutorError } from '../protocol/errors.js';
import type { ExecuteResult, Executor } from '../protocol/types.js';
import { resultToWire, type WireExecuteResult } from '../remote/wire.js';
import type { RetainedOutbounds } from './retained-outbounds.js';
import {
  formatConnectionClosed,
  formatExecutionCancelled,
  formatExecutionSettled,
  formatTooManyExecutions,
  SHUTTING_DOWN,
  type ExecutionKind,
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
  controller: AbortController;
}

export class Connection {
  readonly id: number;
  readonly server: ServerContext;
  #executions = 0;
  readonly #running = new Set<Running>();
  #ended = false;

  constructor(id: number, server: ServerContext) {
    this.id = id;
    this.server = server;
  }

  /**
   * Runs one execution under the connection's bounds. `signal` aborts when the client goes away;
   * an executor that takes it as `execute(request, { signal })` can release the sandbox at once.
   */
  async run(kind: ExecutionKind, body: (signal: AbortSignal) => Promise<ExecuteResult>): Promise<WireExecuteResult> {
    if (this.server.draining) throw new ExecutorError('EXECUTOR_DISPOSED', SHUTTING_DOWN, { retryable: true });
    const limit = this.server.maxExecutionsPerConnection;
    if (this.#running.size >= limit) throw new ExecutorError('LIMIT_EXCEEDED', formatTooManyExecutions(limit));
    this.#executions += 1;
    const running: Running = { execution: this.#executions, kind, controller: new AbortController() };
    this.#running.add(running);
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
      settle();
      if (!running.controller.signal.aborted) {
        this.server.log(formatExecutionSettled(this.id, running.execution, kind, outcome, Date.now() - started));
      }
    }
  }

  /** The client is gone: cancel what still runs, release what it kept. Idempotent. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const running of this.#running) {
      this.server.log(formatExecutionCancelled(this.id, running.execution, running.kind));
      running.controller.abort();
    }
    this.server.retained.releaseConnection(this.id);
    this.server.log(formatConnectionClosed(this.id, this.#executions));
  }
}
