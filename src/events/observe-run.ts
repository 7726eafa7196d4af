/**
 * Watches one call for its events: wraps the request's `dispatch` (tool calls) and `outbound`
 * (fetches) where they run, on the caller's side of any native executor, takes the console lines
 * the executor streams, and ends with `end`. Lines the executor did not stream (it cannot, or they
 * came after the last one it did) are delivered from the result's `logs` before `end`, so every
 * executor's events hold every line, in order.
 */
import { ExecutorError } from '../protocol/errors.js';
import { messageOf } from '../protocol/message-of.js';
import type { Dispatch, ExecuteResult, FetchEvent, LogEntry, OutboundFetch, RunEvent } from '../protocol/types.js';
import { utf8Bytes } from '../protocol/utf8-bytes.js';
import { isTraceparent, SPAN_KIND, startSpan, type TraceSpan } from '../tracing/registered-tracer.js';
import { EventQueue } from './event-queue.js';
import { type ResolvedEventOptions, resolveEventOptions } from './options.js';
import { formatTraceparentInvalid } from './texts.js';

/** Every envelope that carries a failure begins so (`encodeErrorEnvelope`). */
const ERROR_ENVELOPE_HEAD = '{"error":';

/**
 * One call, watched by its events (the caller's `onEvent`), its spans (a tracer provider the host
 * registered), or both.
 */
export class RunObservation {
  readonly #queue: EventQueue | null;
  readonly #span: TraceSpan | null;
  readonly #start = performance.now();
  #calls = 0;
  /** The index of the last console line delivered; lines after it come from the result. */
  #lastLine = -1;
  /** Lines a stream skipped (its own queue was full): counted into `end`'s `dropped`. */
  #skippedLines = 0;
  /** The CPU time the executor measured, when it tells (set before the call settles). */
  cpuMs: number | undefined;

  /** The bound of the call's queue, which a daemon streaming the call's events keeps too. */
  readonly maxQueuedEvents: number;

  constructor(options: ResolvedEventOptions | null, span: TraceSpan | null = null) {
    this.#queue = options === null ? null : new EventQueue(options.onEvent, options.maxQueuedEvents);
    this.maxQueuedEvents = options?.maxQueuedEvents ?? 0;
    this.#span = span;
  }

  /** Whether the caller watches the events (and not only the spans). */
  get watchesEvents(): boolean {
    return this.#queue !== null;
  }

  /** The W3C `traceparent` of the call's span, for the process that runs it; none when untraced. */
  traceparent(): string | undefined {
    return this.#span?.traceparent();
  }

  #push(event: RunEvent): void {
    this.#queue?.push(event);
  }

  elapsed(): number {
    return Math.round(performance.now() - this.#start);
  }

  /** The request's dispatch, with a `tool-call` and a `tool-result` event around each call. */
  dispatch(dispatch: Dispatch): Dispatch {
    return async (provider, tool, argsJson) => {
      const callId = this.#calls++;
      const started = performance.now();
      const argsBytes = typeof argsJson === 'string' ? utf8Bytes(argsJson) : 0;
      this.#push({ type: 'tool-call', elapsedMs: this.elapsed(), callId, provider, tool, argsBytes });
      // The GenAI semantic convention's tool attributes, as agents' OpenTelemetry names them.
      const span = this.#span?.child('codemode.tool', SPAN_KIND.internal, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': tool,
        'gen_ai.tool.call.id': String(callId),
        'gen_ai.tool.type': 'function',
        'codemode.provider': provider,
        'codemode.args_bytes': argsBytes,
      });
      let envelope: string;
      try {
        envelope = await dispatch(provider, tool, argsJson);
      } catch (error) {
        this.#answered(callId, started, { error: messageOf(error) }, span);
        throw error;
      }
      this.#answered(callId, started, answerOf(envelope), span);
      return envelope;
    };
  }

  #answered(
    callId: number,
    started: number,
    answer: { resultBytes?: number; error?: string },
    span: TraceSpan | undefined,
  ): void {
    const durationMs = Math.round(performance.now() - started);
    this.#push({ type: 'tool-result', elapsedMs: this.elapsed(), callId, durationMs, ...answer });
    span?.set('codemode.result_bytes', answer.resultBytes);
    span?.end(answer.error);
  }

  /** The request's outbound fetcher, with a `fetch` event for each request: its method, origin and status. */
  outbound(outbound: OutboundFetch): OutboundFetch {
    return async (request) => {
      const started = performance.now();
      const origin = originOf(request.url);
      const event = (): Omit<FetchEvent, 'status' | 'error'> => ({
        type: 'fetch',
        elapsedMs: this.elapsed(),
        method: request.method,
        origin,
        durationMs: Math.round(performance.now() - started),
      });
      const span = this.#span?.child('codemode.fetch', SPAN_KIND.client, {
        'http.request.method': request.method,
        'codemode.origin': origin,
      });
      try {
        const response = await outbound(request);
        this.#push({ ...event(), status: response.status });
        span?.set('http.response.status_code', response.status);
        span?.end();
        return response;
      } catch (error) {
        const text = messageOf(error);
        this.#push({ ...event(), error: text });
        span?.end(text);
        throw error;
      }
    };
  }

  /** A console line as it happens; `index` is its place among the run's lines. */
  line(entry: LogEntry, index: number): void {
    if (index <= this.#lastLine) return;
    this.#skippedLines += index - this.#lastLine - 1;
    this.#lastLine = index;
    this.#push({ type: 'console', elapsedMs: this.elapsed(), level: entry.level, text: entry.message, index });
  }

  /** An event another process measured (a daemon's fetch through its own outbound), passed on as it is. */
  forward(event: RunEvent): void {
    this.#push(event);
  }

  /** The call settled with `result`: its unstreamed lines, then `end`. */
  settle(result: ExecuteResult): void {
    if (this.#ended) return;
    const logs = Array.isArray(result?.logs) ? result.logs : [];
    for (let index = this.#lastLine + 1; index < logs.length; index++) {
      const entry = logs[index];
      if (entry !== undefined) this.line(entry, index);
    }
    const failed = typeof result?.error === 'string';
    this.#end({ outcome: failed ? 'error' : 'result', ...(failed ? { error: result.error as string } : {}) });
  }

  /** The call rejected. */
  fail(error: unknown): void {
    if (this.#ended) return;
    const code = (error as { code?: unknown } | null)?.code;
    this.#end({ outcome: 'rejected', error: messageOf(error), ...(typeof code === 'string' ? { code } : {}) });
  }

  #ended = false;

  #end(fields: { outcome: 'result' | 'error' | 'rejected'; error?: string; code?: string }): void {
    this.#ended = true;
    const wallMs = this.elapsed();
    if (this.#span !== null) {
      this.#span.set('codemode.outcome', fields.outcome);
      this.#span.set('codemode.cpu_ms', this.cpuMs === undefined ? undefined : Math.round(this.cpuMs));
      this.#span.set('codemode.console_lines', this.#lastLine + 1);
      this.#span.end(fields.error);
    }
    this.#queue?.end(
      {
        type: 'end',
        elapsedMs: wallMs,
        ...fields,
        wallMs,
        ...(this.cpuMs !== undefined ? { cpuMs: Math.round(this.cpuMs) } : {}),
      },
      this.#skippedLines,
    );
  }
}

function answerOf(envelope: unknown): { resultBytes?: number; error?: string } {
  if (typeof envelope !== 'string') return {};
  if (envelope.startsWith(ERROR_ENVELOPE_HEAD)) {
    try {
      const { error } = JSON.parse(envelope) as { error?: unknown };
      if (typeof error === 'string') return { error };
    } catch {
      // Not JSON after all: a result of that shape, counted by its size.
    }
  }
  return { resultBytes: utf8Bytes(envelope) };
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/**
 * The observation of one call of `method`, from the call's options: `null` when they ask for no
 * events, so a call without `onEvent` pays nothing more. A wrong option throws `INVALID_REQUEST`.
 */
export function observeCall(method: string, options: unknown): RunObservation | null {
  const resolved = resolveEventOptions(method, options);
  const traceparent = (options as { traceparent?: unknown } | null | undefined)?.traceparent;
  if (traceparent !== undefined && !isTraceparent(traceparent))
    throw new ExecutorError('INVALID_REQUEST', formatTraceparentInvalid(method, traceparent));
  const span = startSpan(
    method === 'execute' ? 'codemode.execute' : 'codemode.invoke_handle',
    {
      'codemode.method': method,
    },
    traceparent,
  );
  return resolved === null && span === null ? null : new RunObservation(resolved, span);
}

/** Ties the call's promise to the observation's end: `end` follows its result or its rejection. */
export function settleObservation<T extends ExecuteResult>(
  observation: RunObservation | null,
  call: Promise<T>,
): Promise<T> {
  if (observation === null) return call;
  call.then(
    (result) => observation.settle(result),
    (error: unknown) => observation.fail(error),
  );
  return call;
}
