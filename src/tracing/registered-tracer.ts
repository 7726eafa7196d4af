/**
 * OpenTelemetry without a dependency: `@opentelemetry/api` keeps what a host registers (its tracer
 * provider, its context manager) in one global, `Symbol.for('opentelemetry.js.api.1')`, which
 * every copy of the api 1.x reads. This module reads that global instead of importing the api, so
 * the root entry still bundles for a Worker without it, and a host that registered no SDK pays one
 * property read per call and nothing else. Only the members of the api's interfaces used here are
 * declared.
 */

const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
/** The api's `SPAN_KEY` (`createContextKey('OpenTelemetry Context Key SPAN')`). */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/** The api's `SpanStatusCode.ERROR`. */
const STATUS_ERROR = 2;
/** The api's `SpanKind`. */
export const SPAN_KIND = { internal: 0, client: 2 } as const;

export type Attributes = Record<string, string | number | boolean>;

interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
}

interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
}

interface OtelSpan {
  spanContext(): SpanContext;
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

interface Tracer {
  startSpan(name: string, options: { kind: number; attributes: Attributes }, context?: OtelContext): OtelSpan;
}

interface ApiGlobal {
  trace?: { getTracer(name: string, version?: string): Tracer };
  context?: { active(): OtelContext };
}

const TRACER_NAME = '@supolka/cloudflare-codemode-executor';

/** One span, and the context its children start in. */
export class TraceSpan {
  readonly #tracer: Tracer;
  readonly #span: OtelSpan;
  /** The context this span's children start in. */
  readonly #context: OtelContext;

  constructor(tracer: Tracer, span: OtelSpan, parent: OtelContext) {
    this.#tracer = tracer;
    this.#span = span;
    this.#context = parent.setValue(SPAN_KEY, span);
  }

  /** A child span of this one. */
  child(name: string, kind: number, attributes: Attributes): TraceSpan {
    const span = this.#tracer.startSpan(name, { kind, attributes }, this.#context);
    return new TraceSpan(this.#tracer, span, this.#context);
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  /** The W3C `traceparent` naming this span, for a process that continues the trace. */
  traceparent(): string {
    const { traceId, spanId, traceFlags } = this.#span.spanContext();
    return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
  }

  set(key: string, value: string | number | boolean | undefined): void {
    if (value !== undefined) this.#span.setAttribute(key, value);
  }

  /** Ends the span; `error` sets its status to an error with that text. */
  end(error?: string): void {
    if (error !== undefined) this.#span.setStatus({ code: STATUS_ERROR, message: error });
    this.#span.end();
  }
}

/** An immutable context, as the api's own, for a host that registered no context manager. */
class ValueContext implements OtelContext {
  readonly #values: ReadonlyMap<symbol, unknown>;

  constructor(values: ReadonlyMap<symbol, unknown> = new Map()) {
    this.#values = values;
  }

  getValue(key: symbol): unknown {
    return this.#values.get(key);
  }

  setValue(key: symbol, value: unknown): OtelContext {
    return new ValueContext(new Map(this.#values).set(key, value));
  }

  deleteValue(key: symbol): OtelContext {
    const values = new Map(this.#values);
    values.delete(key);
    return new ValueContext(values);
  }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** Whether `value` is a W3C `traceparent` (version 00). */
export function isTraceparent(value: unknown): value is string {
  return typeof value === 'string' && TRACEPARENT.test(value);
}

/**
 * Starts a root span of a call when the host registered a tracer provider: a child of the caller's
 * active span, or of `traceparent` (the caller's span in another process) when given. `null` when
 * none is registered: the call then traces nothing, and costs nothing more.
 */
export function startSpan(name: string, attributes: Attributes, traceparent?: string): TraceSpan | null {
  const api = (globalThis as Record<symbol, ApiGlobal | undefined>)[API_GLOBAL];
  if (api?.trace === undefined) return null;
  const tracer = api.trace.getTracer(TRACER_NAME);
  let parent: OtelContext = api.context?.active() ?? new ValueContext();
  const remote = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (remote !== null) {
    const [, traceId = '', spanId = '', flags = '00'] = remote;
    const spanContext: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
    // The api's non-recording span, as `trace.setSpanContext` makes it: only its context is read.
    const remoteSpan = { spanContext: () => spanContext, isRecording: () => false };
    parent = parent.setValue(SPAN_KEY, remoteSpan);
  }
  const span = tracer.startSpan(name, { kind: SPAN_KIND.internal, attributes }, parent);
  return new TraceSpan(tracer, span, parent);
}
