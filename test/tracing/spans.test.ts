/**
 * OpenTelemetry spans (docs/observing.md, "Traces") with the SDK's in-memory exporter: a run is a
 * `codemode.execute` span under the caller's active span, with one `codemode.tool` per tool call
 * (the GenAI semantic convention's tool attributes) and one `codemode.fetch` per outbound request,
 * in process and across a daemon (served in this process, so its spans reach the same exporter;
 * its `codemode.execute` is a child of the client's through the traceparent on the wire). The
 * daemon's log line of the call names the trace.
 */
import { context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import type { Executor } from '../../src/protocol/types.js';
import { connect } from '../../src/remote/index.js';
import { createExecutorServer, type ExecutorServer } from '../../src/server/index.js';
import { NodeWebSocket } from '../support/client.js';

const exporter = new InMemorySpanExporter();
let isolate: IsolateExecutor;
let server: ExecutorServer;
let remote: Executor;
const daemonLog: string[] = [];

beforeAll(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  isolate = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
  server = await createExecutorServer({ executor: isolate, port: 0, log: (line) => void daemonLog.push(line) });
  remote = await connect(server.url, { websocket: NodeWebSocket });
}, 60_000);

afterAll(async () => {
  await remote?.dispose();
  await server?.close();
  await isolate?.dispose();
  trace.disable();
  context.disable();
});

const weather = { name: 'weather', fns: { get: async ({ city }: { city: string }) => ({ city, celsius: 12 }) } };
const CODE =
  'const oslo = await weather.get({ city: "Oslo" })\nconst bergen = await weather.get({ city: "Bergen" })\nconst status = (await fetch("https://api.example/x")).status\nreturn [oslo.celsius, bergen.celsius, status]';

/** Runs CODE under a caller's span; the spans of that trace, and the caller's. */
async function traced(native: Executor): Promise<{ caller: ReadableSpan; spans: ReadableSpan[] }> {
  exporter.reset();
  const tracer = trace.getTracer('host');
  const callerId = await tracer.startActiveSpan('caller', async (span: Span) => {
    const result = await new CodemodeExecutor(native).execute(CODE, [weather], {
      outbound: () => new Response('ok', { status: 202 }),
    });
    expect(result.result).toEqual([12, 12, 202]);
    span.end();
    return span.spanContext().spanId;
  });
  const spans = exporter.getFinishedSpans();
  const caller = spans.find((span) => span.spanContext().spanId === callerId)!;
  return { caller, spans: spans.filter((span) => span.spanContext().traceId === caller.spanContext().traceId) };
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);

describe('spans', () => {
  it('in process: codemode.execute under the caller, one codemode.tool per call, a codemode.fetch', async () => {
    const { caller, spans } = await traced(isolate);
    const [execute, ...more] = named(spans, 'codemode.execute');
    expect(more).toEqual([]);
    expect(parentOf(execute!)).toBe(caller.spanContext().spanId);
    const tools = named(spans, 'codemode.tool');
    expect(tools.map((span) => span.attributes)).toEqual([
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get',
        'gen_ai.tool.call.id': '0',
        'gen_ai.tool.type': 'function',
        'codemode.provider': 'weather',
        'codemode.args_bytes': '[{"city":"Oslo"}]'.length,
        'codemode.result_bytes': '{"result":{"city":"Oslo","celsius":12}}'.length,
      },
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get',
        'gen_ai.tool.call.id': '1',
        'gen_ai.tool.type': 'function',
        'codemode.provider': 'weather',
        'codemode.args_bytes': '[{"city":"Bergen"}]'.length,
        'codemode.result_bytes': '{"result":{"city":"Bergen","celsius":12}}'.length,
      },
    ]);
    for (const span of tools) expect(parentOf(span)).toBe(execute!.spanContext().spanId);
    const [fetchSpan] = named(spans, 'codemode.fetch');
    expect(fetchSpan?.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 202 });
    expect(parentOf(fetchSpan!)).toBe(execute!.spanContext().spanId);
    expect(execute!.attributes).toMatchObject({ 'codemode.method': 'execute', 'codemode.outcome': 'result' });
  }, 60_000);

  it("across the daemon: the daemon's codemode.execute is a child of the client's, and its log line names the trace", async () => {
    const { caller, spans } = await traced(remote);
    const executes = named(spans, 'codemode.execute');
    expect(executes).toHaveLength(2);
    const client = executes.find((span) => parentOf(span) === caller.spanContext().spanId)!;
    const daemon = executes.find((span) => span !== client)!;
    expect(client).toBeDefined();
    expect(parentOf(daemon)).toBe(client.spanContext().spanId);
    // The client's tool spans measure the tools where they run; the daemon's, the round trip to them.
    const clientTools = named(spans, 'codemode.tool').filter((span) => parentOf(span) === client.spanContext().spanId);
    expect(clientTools.map((span) => span.attributes['gen_ai.tool.call.id'])).toEqual(['0', '1']);
    const daemonTools = named(spans, 'codemode.tool').filter((span) => parentOf(span) === daemon.spanContext().spanId);
    expect(daemonTools.map((span) => span.attributes['gen_ai.tool.call.id'])).toEqual(['0', '1']);
    const bothSides = [client.spanContext().spanId, daemon.spanContext().spanId].sort();
    expect(named(spans, 'codemode.fetch').map(parentOf).sort()).toEqual(bothSides);
    const traceId = caller.spanContext().traceId;
    expect(daemonLog.some((line) => line.includes(`trace_id=${traceId}`))).toBe(true);
  }, 60_000);

  it("sets an error status with the run's text", async () => {
    exporter.reset();
    const result = await new CodemodeExecutor(isolate).execute('throw new Error("nope")', []);
    expect(result.error).toBe('nope');
    const [execute] = named(exporter.getFinishedSpans(), 'codemode.execute');
    expect(execute?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'nope' });
  }, 60_000);
});
