/**
 * Run records and replay over a native executor that really runs the code (node:vm) and really
 * dispatches codec-encoded calls: what a record holds, that it meets its schema, the size bound,
 * and every kind of comparison replay gives. test/record/record-isolate.test.ts runs the same on
 * IsolateExecutor and over a daemon.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { createEnvelopeDispatch, type ProviderHandler } from '../../src/protocol/dispatch.js';
import { ExecutionTimeoutError, ExecutorError } from '../../src/protocol/errors.js';
import { TIMEOUT_MESSAGE } from '../../src/protocol/texts.js';
import type { ExecuteRequest, Executor } from '../../src/protocol/types.js';
import { DEFAULT_MAX_RECORD_BYTES, RECORD_ROWS } from '../../src/record/record-options.js';
import { recordExecution, startRecording } from '../../src/record/recorder.js';
import { replay } from '../../src/record/replay.js';
import { REPLAY_BOUND_SLACK_MS, REPLAY_ROWS } from '../../src/record/replay-options.js';
import { formatOnRecordFailed, formatReplayBoundReached, formatReplayCallDiverged } from '../../src/record/texts.js';
import type { RunRecord } from '../../src/record/types.js';
import { VmExecutor } from '../codemode/support/vm-executor.js';
import { codeSpans, firstNumber, readDocs, tableUnder } from '../support/docs-tables.js';
import { expectValid } from './support/valid-record.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A weather provider whose tool counts its real calls, so a test sees that replay runs none. */
function weather() {
  const real = { calls: 0 };
  const handler: ProviderHandler = (tool, args) => {
    real.calls += 1;
    if (tool === 'fail') throw new Error('the vendor is down');
    const { city } = args[0] as { city: string };
    return { city, celsius: city.length * 3 };
  };
  const request = (code: string): ExecuteRequest => ({
    code,
    providers: [{ name: 'weather', tools: ['get', 'fail'] }],
    dispatch: createEnvelopeDispatch({ weather: handler }, { active: true }),
  });
  return { real, request };
}

const TWO_CITIES = `async () => {
  const a = await weather.get({ city: "Oslo" })
  console.log("first", a.celsius)
  const b = await weather.get({ city: "Lisbon" })
  return a.celsius + b.celsius
}`;

/** Records `code` on a vm executor: the record, with the provider's real-call counter. */
async function recorded(code: string, options?: Parameters<typeof recordExecution>[2]) {
  const { real, request } = weather();
  const { outcome, record } = await recordExecution(new VmExecutor(), request(code), options);
  return { real, outcome, record };
}

describe('a run record', () => {
  it('holds the code, the providers, every call with its arguments and result in order, the logs, the outcome and timings', async () => {
    const { outcome, record } = await recorded(TWO_CITIES);
    expect(outcome).toEqual({ result: 12 + 18, logs: [{ level: 'log', message: 'first 12' }] });
    expect(record).toMatchObject({
      format: 'codemode-run-record',
      schemaVersion: 1,
      request: { code: TWO_CITIES, providers: [{ name: 'weather', tools: ['get', 'fail'] }] },
      calls: [
        { provider: 'weather', tool: 'get', args: [{ city: 'Oslo' }], result: { city: 'Oslo', celsius: 12 } },
        { provider: 'weather', tool: 'get', args: [{ city: 'Lisbon' }], result: { city: 'Lisbon', celsius: 18 } },
      ],
      logs: [{ level: 'log', message: 'first 12' }],
      outcome: { result: 30 },
    });
    expect(record.truncated).toBeUndefined();
    for (const call of record.calls) {
      expect(call.startMs).toBeGreaterThanOrEqual(0);
      expect(call.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(record.calls[1]!.startMs).toBeGreaterThanOrEqual(record.calls[0]!.startMs);
    expect(Date.parse(record.timing.startedAt)).not.toBeNaN();
    expectValid(record);
  });

  it('holds a failed call as its error text, and a failed run as its error', async () => {
    const { record } = await recorded(
      'async () => { try { await weather.fail() } catch (e) { console.warn(e.message) } throw new Error("gave up") }',
    );
    expect(record.calls).toMatchObject([{ tool: 'fail', args: [], error: 'the vendor is down' }]);
    expect(record.calls[0]).not.toHaveProperty('result');
    expect(record.outcome).toEqual({ error: 'gave up' });
    expect(record.logs).toEqual([{ level: 'warn', message: 'the vendor is down' }]);
    expectValid(record);
  });

  it('keeps bytes as the binary codec tagged them, and they replay as bytes', async () => {
    const executor = new VmExecutor();
    const request: ExecuteRequest = {
      code: 'async () => { const out = await blob.echo(new Uint8Array([1, 2, 250])); return Object.prototype.toString.call(out) === "[object Uint8Array]" ? [...out] : "not bytes" }',
      providers: [{ name: 'blob', tools: ['echo'] }],
      dispatch: createEnvelopeDispatch({ blob: (_tool, [bytes]) => bytes }, { active: true }),
    };
    const { outcome, record } = await recordExecution(executor, request);
    expect(outcome.result).toEqual([1, 2, 250]);
    // The vm's Uint8Array is of another realm, so the codec tags it as a view; the isolate test sees Uint8Array.
    const tagged = { __codemode_binary_v1__: expect.stringMatching(/^(Uint8Array|ArrayBufferView)$/), data: 'AQL6' };
    expect(record.calls[0]).toMatchObject({ args: [tagged], result: tagged });
    expectValid(record);
    expect(await replay(record, { executor: new VmExecutor() })).toMatchObject({ identical: true });
  });

  it('records what the request asked for, and none of its functions', async () => {
    const { request } = weather();
    const outbound = vi.fn(() => new Response('never called'));
    const full: ExecuteRequest = {
      ...request('async () => 1'),
      timeout: 4_000,
      cpuTimeout: 900,
      countHostWaits: true,
      outbound,
      retainHandles: false,
    };
    const { record } = await recordExecution(new VmExecutor(), full);
    expect(record.request).toEqual({
      code: 'async () => 1',
      providers: [{ name: 'weather', tools: ['get', 'fail'] }],
      timeout: 4_000,
      cpuTimeout: 900,
      countHostWaits: true,
    });
    expectValid(record);
  });

  it('records a dispatch that rejects, and replays the rejection', async () => {
    const executor = new VmExecutor();
    const request: ExecuteRequest = {
      code: 'async () => { try { return await flaky.go(1) } catch (e) { return "caught: " + e.message } }',
      providers: [{ name: 'flaky', tools: ['go'] }],
      dispatch: () => Promise.reject(new Error('socket closed')),
    };
    const { outcome, record } = await recordExecution(executor, request);
    expect(record.calls).toMatchObject([{ provider: 'flaky', tool: 'go', error: 'socket closed', rejected: true }]);
    expectValid(record);
    const comparison = await replay(record, { executor: new VmExecutor() });
    expect(comparison).toMatchObject({ identical: true });
    expect(comparison.replayed.outcome).toEqual({ result: outcome.result });
  });
  it('keeps a call the run abandoned unanswered, even when its answer comes later, and replays the run to the same end', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const request: ExecuteRequest = {
      code: 'async () => { console.log("asking"); return await slow.wait() }',
      providers: [{ name: 'slow', tools: ['wait'] }],
      dispatch: createEnvelopeDispatch({ slow: () => released.then(() => 'late answer') }, { active: true }),
      timeout: 100,
    };
    const { outcome, record } = await recordExecution(new VmExecutor(), request);
    expect(outcome.error).toBeDefined();
    release();
    await released;
    await new Promise((resolve) => setImmediate(resolve));
    expect(record.calls).toHaveLength(1);
    expect(record.calls[0]).not.toHaveProperty('durationMs');
    expect(record.calls[0]).not.toHaveProperty('result');
    expect(record.outcome).toEqual({ error: outcome.error });
    expectValid(record);
    expect(await replay(record, { executor: new VmExecutor() })).toMatchObject({ identical: true });
  });
});

describe('the size bound', () => {
  it('cuts the calls from the first that does not fit, says so, and leaves the run alone', async () => {
    const code = `async () => {
      for (let i = 0; i < 20; i++) await weather.get({ city: "x".repeat(200) + i })
      console.log("done")
      return "finished"
    }`;
    const whole = await recorded(code);
    const { outcome, record } = await recorded(code, { maxBytes: 2_000 });
    // The run is the same, recorded whole or cut.
    expect(outcome).toEqual(whole.outcome);
    expect(outcome.result).toBe('finished');
    expect(record.calls.length).toBeGreaterThan(0);
    expect(record.calls.length).toBeLessThan(20);
    expect(record.calls).toEqual(whole.record.calls.slice(0, record.calls.length).map(withTimesOf(record.calls)));
    expect(JSON.stringify(record.calls).length).toBeLessThanOrEqual(2_000);
    expect(record.truncated).toMatchObject({
      maxBytes: 2_000,
      droppedCalls: 20 - record.calls.length,
    });
    expect(record.truncated?.text).toContain('2000 bytes (record.maxBytes)');
    expect(record.truncated?.text).toContain(`left out ${20 - record.calls.length} tool call(s)`);
    expect(record.truncated?.text).toContain('larger record.maxBytes');
    expectValid(record);
    const refusal = await replay(record, { executor: new VmExecutor() }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ExecutorError);
    expect(refusal).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((refusal as Error).message).toContain('cannot run a record that was cut');
  });

  it('leaves out a result and console lines past the bound, keeping the error text', async () => {
    const { record } = await recorded(
      'async () => { for (let i = 0; i < 50; i++) console.log("line " + i); return "v".repeat(5000) }',
      { maxBytes: 1_000 },
    );
    expect(record.outcome).toEqual({});
    expect(record.truncated).toMatchObject({ droppedResult: true, droppedCalls: 0 });
    expect(record.logs.length).toBeLessThan(50);
    expect(record.truncated?.droppedLogs).toBe(50 - record.logs.length);
    expect(record.truncated?.text).toContain("the outcome's value");
    expectValid(record);
  });

  it("is docs/observing.md's replay options table, row for row", () => {
    const rows = tableUnder(readDocs('observing.md'), "### Replay's options");
    expect(rows.map((cells) => codeSpans(cells[0]!)[0])).toEqual(Object.keys(REPLAY_ROWS));
    for (const [cell, , description] of rows) {
      expect(description).toBe(REPLAY_ROWS[codeSpans(cell!)[0] as keyof typeof REPLAY_ROWS].description);
    }
  });

  it("is docs/observing.md's options table, row for row", () => {
    const rows = tableUnder(readDocs('observing.md'), '## Run records and replay');
    expect(rows.map((cells) => codeSpans(cells[0]!)[0])).toEqual(Object.keys(RECORD_ROWS));
    for (const [cell, default_, description] of rows) {
      const row = RECORD_ROWS[codeSpans(cell!)[0] as keyof typeof RECORD_ROWS];
      expect(description).toBe(row.description);
      if ('default' in row) expect(firstNumber(default_!)).toBe(row.default);
    }
    expect(RECORD_ROWS.maxBytes.default).toBe(DEFAULT_MAX_RECORD_BYTES);
  });

  it('is 1 MiB unless set, and refuses a bound that is not a positive integer, naming it', async () => {
    const big = await recorded('async () => "v".repeat(900 * 1024)');
    expect(big.record.truncated).toBeUndefined();
    const bigger = await recorded('async () => "v".repeat(1100 * 1024)');
    expect(bigger.record.truncated).toMatchObject({ maxBytes: 1_048_576, droppedResult: true });
    for (const maxBytes of [0, -1, 1.5, '100']) {
      const error = await recorded('async () => 1', { maxBytes: maxBytes as number }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'INVALID_REQUEST' });
      expect((error as Error).message).toMatch(/^record\.maxBytes must be a positive integer number of bytes/);
    }
    const unknown = await recorded('async () => 1', { maxByte: 10 } as never).catch((e: unknown) => e);
    expect((unknown as Error).message).toContain(
      'record has no option "maxByte" (did you mean maxBytes?); the options are maxBytes, onRecord',
    );
  });
});

describe('the size bound counts what is written', () => {
  // A line of control characters or quotes grows when JSON escapes it: \u0001 is six bytes written.
  for (const [what, char] of [
    ['control characters', '\\u0001'],
    ['quotes', '\\"'],
  ] as const) {
    it(`keeps a record of console lines of ${what} within record.maxBytes as JSON`, async () => {
      const maxBytes = 20_000;
      const { record } = await recorded(
        `async () => { for (let i = 0; i < 200; i++) console.log("${char}".repeat(400)); return 1 }`,
        { maxBytes },
      );
      expect(record.truncated?.droppedLogs).toBeGreaterThan(0);
      const written = new TextEncoder().encode(
        JSON.stringify({ calls: record.calls, logs: record.logs, outcome: record.outcome }),
      );
      expect(written.byteLength).toBeLessThanOrEqual(maxBytes);
      expectValid(record);
    });
  }

  it('counts a call whose provider name and error text need escapes as written', async () => {
    const maxBytes = 4_000;
    const request: ExecuteRequest = {
      code: 'async () => { for (let i = 0; i < 50; i++) { try { await q.fail() } catch {} } return 1 }',
      providers: [{ name: 'q', tools: ['fail'] }],
      dispatch: createEnvelopeDispatch(
        {
          q: () => {
            throw new Error('\u0002'.repeat(100));
          },
        },
        { active: true },
      ),
    };
    const { record } = await recordExecution(new VmExecutor(), request, { maxBytes });
    expect(record.truncated?.droppedCalls).toBeGreaterThan(0);
    expect(new TextEncoder().encode(JSON.stringify(record.calls)).byteLength).toBeLessThanOrEqual(maxBytes);
  });
});

/** Copies the timings of `actual` onto the expected calls: timings differ from run to run. */
function withTimesOf(actual: RunRecord['calls']) {
  return (call: RunRecord['calls'][number], index: number) => ({
    ...call,
    startMs: actual[index]!.startMs,
    durationMs: actual[index]!.durationMs,
  });
}

describe('replay', () => {
  it('runs the same code again with every call answered from the record, and no real tool runs', async () => {
    const { real, record } = await recorded(TWO_CITIES);
    const callsBefore = real.calls;
    const executor = new VmExecutor();
    const comparison = await replay(record, { executor });
    expect(comparison.identical).toBe(true);
    expect(real.calls).toBe(callsBefore);
    expect(executor.calls.map((call) => call.envelope)).toEqual([
      JSON.stringify({ result: { city: 'Oslo', celsius: 12 } }),
      JSON.stringify({ result: { city: 'Lisbon', celsius: 18 } }),
    ]);
    expect(comparison.replayed.outcome).toEqual({ result: 30 });
    expectValid(comparison.replayed);
  });

  it('replays failed calls and failed runs as recorded', async () => {
    const { record } = await recorded(
      'async () => { try { await weather.fail() } catch (e) { console.warn(e.message) } throw new Error("gave up") }',
    );
    expect(await replay(record, { executor: new VmExecutor() })).toMatchObject({ identical: true });
  });

  it('names the first call whose arguments differ when the code changed', async () => {
    const { record } = await recorded(TWO_CITIES);
    const changed = structuredClone(record);
    changed.request.code = TWO_CITIES.replace('"Lisbon"', '"Porto"');
    const comparison = await replay(changed, { executor: new VmExecutor() });
    expect(comparison).toMatchObject({
      identical: false,
      divergence: {
        kind: 'call',
        index: 1,
        recorded: { provider: 'weather', tool: 'get', args: [{ city: 'Lisbon' }] },
        replayed: { provider: 'weather', tool: 'get', args: [{ city: 'Porto' }] },
      },
    });
    // The parted call is answered with an error, so the run ends rather than waiting.
    expect(comparison.replayed.calls[1]?.error).toBe(formatReplayCallDiverged(1));
    expect(comparison.replayed.outcome.error).toBe(formatReplayCallDiverged(1));
  });

  it('names a call to another tool', async () => {
    const { record } = await recorded(TWO_CITIES);
    const changed = structuredClone(record);
    changed.request.code = TWO_CITIES.replace('weather.get({ city: "Oslo" })', 'weather.forecast({ city: "Oslo" })');
    const comparison = await replay(changed, { executor: new VmExecutor() });
    expect(comparison).toMatchObject({
      identical: false,
      divergence: { kind: 'call', index: 0, recorded: { tool: 'get' }, replayed: { tool: 'forecast' } },
    });
  });

  it('names an extra call past the record, and a recorded call the run never made', async () => {
    const { record } = await recorded(TWO_CITIES);
    const extra = structuredClone(record);
    extra.request.code = TWO_CITIES.replace(
      'return a.celsius',
      'await weather.get({ city: "Rome" }); return a.celsius',
    );
    expect(await replay(extra, { executor: new VmExecutor() })).toMatchObject({
      identical: false,
      divergence: { kind: 'extra-call', index: 2, replayed: { tool: 'get', args: [{ city: 'Rome' }] } },
    });
    const missing = structuredClone(record);
    missing.request.code =
      'async () => { const a = await weather.get({ city: "Oslo" }); console.log("first", a.celsius); return 30 }';
    expect(await replay(missing, { executor: new VmExecutor() })).toMatchObject({
      identical: false,
      divergence: { kind: 'missing-call', index: 1, recorded: { tool: 'get', args: [{ city: 'Lisbon' }] } },
    });
  });

  it('names the outcome when the calls match but the run ends otherwise', async () => {
    const { record } = await recorded(TWO_CITIES);
    const changed = structuredClone(record);
    changed.request.code = TWO_CITIES.replace('return a.celsius + b.celsius', 'return a.celsius * b.celsius');
    expect(await replay(changed, { executor: new VmExecutor() })).toMatchObject({
      identical: false,
      divergence: { kind: 'outcome', recorded: { result: 30 }, replayed: { result: 216 } },
    });
    const failing = structuredClone(record);
    failing.request.code = TWO_CITIES.replace('return a.celsius + b.celsius', 'throw new Error("no sum")');
    expect(await replay(failing, { executor: new VmExecutor() })).toMatchObject({
      identical: false,
      divergence: { kind: 'outcome', recorded: { result: 30 }, replayed: { error: 'no sum' } },
    });
  });

  it('names the first console line that differs', async () => {
    const { record } = await recorded(TWO_CITIES);
    const changed = structuredClone(record);
    changed.request.code = TWO_CITIES.replace('console.log("first"', 'console.error("first"');
    expect(await replay(changed, { executor: new VmExecutor() })).toMatchObject({
      identical: false,
      divergence: {
        kind: 'log',
        index: 0,
        recorded: { level: 'log', message: 'first 12' },
        replayed: { level: 'error', message: 'first 12' },
      },
    });
  });

  it('refuses what is no run record, and a call without an executor, saying what it needs', async () => {
    const { record } = await recorded('async () => 1');
    const noExecutor = await replay(record, undefined as never).catch((e: unknown) => e);
    expect(noExecutor).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((noExecutor as Error).message).toContain('replay() needs options.executor');
    const newer = await replay({ ...record, schemaVersion: 2 } as never, { executor: new VmExecutor() }).catch(
      (e: unknown) => e,
    );
    expect((newer as Error).message).toBe(
      'replay() takes a run record (format "codemode-run-record", schemaVersion 1, schema/run-record.schema.json): schemaVersion is 2, not 1',
    );
    const nothing = await replay(null as never, { executor: new VmExecutor() }).catch((e: unknown) => e);
    expect((nothing as Error).message).toContain('record is null, not an object');
  });
});

describe('replay takes what users pass', () => {
  it('replays on the native executor a CodemodeExecutor wraps, as on the native one', async () => {
    const { record } = await recorded(TWO_CITIES);
    const native = new VmExecutor();
    const comparison = await replay(record, { executor: new CodemodeExecutor(native) });
    expect(comparison).toMatchObject({ identical: true, replayed: { outcome: { result: 30 } } });
    expect(native.requests).toHaveLength(1);
  });

  it('gives a replay option with a typo the did-you-mean record options get', async () => {
    const { record } = await recorded('async () => 1');
    const error = await replay(record, { executor: new VmExecutor(), timout: 5 } as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((error as Error).message).toBe(
      'replay() has no option "timout" (did you mean timeout?); the options are executor, outbound, timeout, signal',
    );
    const badTimeout = await replay(record, { executor: new VmExecutor(), timeout: -1 }).catch((e: unknown) => e);
    expect((badTimeout as Error).message).toMatch(/^replay\(\) options\.timeout must be a number of milliseconds >= 0/);
    const notExecutor = await replay(record, { executor: {} as never }).catch((e: unknown) => e);
    expect((notExecutor as Error).message).toMatch(/^replay\(\) options\.executor must be a native executor/);
  });

  it('says to parse a record given as JSON text', async () => {
    const { record } = await recorded('async () => 1');
    const error = await replay(JSON.stringify(record) as never, { executor: new VmExecutor() }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((error as Error).message).toContain('parse stored JSON first, replay(JSON.parse(text), options)');
    // Parsed, the same text replays.
    expect(await replay(JSON.parse(JSON.stringify(record)), { executor: new VmExecutor() })).toMatchObject({
      identical: true,
    });
  });

  it('refuses a malformed record with INVALID_REQUEST naming the field, never a TypeError or RangeError', async () => {
    const { record } = await recorded(TWO_CITIES);
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const cases: Array<[string, (copy: Record<string, any>) => void]> = [
      ['truncated is null, not an object', (copy) => (copy.truncated = null)],
      ['request.providers[0] is null, not an object', (copy) => (copy.request.providers = [null])],
      ['calls[0].args cannot be written as JSON', (copy) => (copy.calls[0].args = deep)],
      ['outcome.result cannot be written as JSON', (copy) => (copy.outcome.result = deep)],
      [
        'request has a field "retainHandles" that a run record does not hold',
        (copy) => (copy.request.retainHandles = true),
      ],
      ['calls[1].startMs is "0", not a number from 0', (copy) => (copy.calls[1].startMs = '0')],
      ['logs[0].message is missing', (copy) => delete copy.logs[0].message],
      ['request.code is missing', (copy) => delete copy.request.code],
    ];
    for (const [problem, damage] of cases) {
      const copy = JSON.parse(JSON.stringify(record));
      damage(copy);
      const executor = new VmExecutor();
      const error = await replay(copy, { executor }).catch((e: unknown) => e);
      expect(error, problem).toBeInstanceOf(ExecutorError);
      expect(error, problem).toMatchObject({ code: 'INVALID_REQUEST' });
      expect((error as Error).message, problem).toContain(problem);
      expect(executor.requests, problem).toHaveLength(0);
    }
  });
});

describe('replay never hangs', () => {
  /** A record whose one call was abandoned when the caller gave the run up: the call never got an answer. */
  async function abandonedByCaller(countHostWaits: boolean) {
    const controller = new AbortController();
    const request: ExecuteRequest = {
      code: 'async () => { console.log("asking"); return await slow.wait() }',
      providers: [{ name: 'slow', tools: ['wait'] }],
      dispatch: createEnvelopeDispatch(
        {
          slow: () => {
            controller.abort();
            return new Promise(() => {});
          },
        },
        { active: true },
      ),
      countHostWaits,
    };
    const recording = startRecording(request);
    const executor = new VmExecutor();
    // The vm executor cannot cancel: the caller's give-up is its rejection, as a host's would be.
    const aborted = new Promise<never>((_, reject) =>
      controller.signal.addEventListener('abort', () =>
        reject(new ExecutorError('EXECUTION_CANCELLED', 'The execute call was cancelled')),
      ),
    );
    const error = await Promise.race([executor.execute(recording.request), aborted]).catch((e: unknown) => e);
    return recording.fail(error);
  }

  it('gives a run up at the call the recorded run was given up on, and ends identical', async () => {
    const record = await abandonedByCaller(false);
    expect(record.calls[0]).not.toHaveProperty('durationMs');
    expect(record.outcome.rejected?.code).toBe('EXECUTION_CANCELLED');
    expectValid(record);
    const started = performance.now();
    const comparison = await replay(record, { executor: new VmExecutor({ defaultTimeout: 600_000 }) });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(comparison).toMatchObject({ identical: true });
    expect(comparison.replayed.outcome.rejected).toMatchObject({ code: 'EXECUTION_CANCELLED' });
    expect(comparison.replayed.outcome.rejected?.message).toContain('Replay gave the run up at call #1');
  });

  it('ends a run that outlives its bound, even on an executor that ignores the signal, naming its bound', async () => {
    const { record } = await recorded('async () => 1');
    // The record says the run waited forever on nothing replay can answer: a spin it cannot stop.
    record.request.code = 'async () => await new Promise(() => {})';
    // An executor that neither keeps the bound nor hears the signal: only replay's own bound ends the run.
    const executor = new VmExecutor();
    const execute = executor.execute.bind(executor);
    executor.execute = (request) => execute({ ...request, timeout: 600_000 });
    const started = performance.now();
    const comparison = await replay(record, { executor, timeout: 50 });
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(50);
    expect(took).toBeLessThan(50 + REPLAY_BOUND_SLACK_MS + 2_000);
    expect(comparison).toMatchObject({
      identical: false,
      divergence: { kind: 'outcome', replayed: { rejected: { code: 'EXECUTION_TIMEOUT' } } },
    });
    expect(comparison.replayed.outcome.rejected?.message).toBe(formatReplayBoundReached(50 + REPLAY_BOUND_SLACK_MS));
  });

  it("ends when the caller's signal aborts, rejecting with EXECUTION_CANCELLED, and passes the abort to the executor", async () => {
    const { record } = await recorded('async () => 1');
    record.request.code = 'async () => await new Promise(() => {})';
    const inner = new VmExecutor({ defaultTimeout: 600_000 });
    const seen: Array<AbortSignal | undefined> = [];
    // The vm executor cannot cancel: this one notes the signal it is handed, and runs on.
    const executor: Executor = {
      execute: (request, options) => {
        seen.push(options?.signal);
        return inner.execute(request);
      },
      invokeHandle: () => inner.invokeHandle(),
      closeHandles: () => inner.closeHandles(),
      dispose: () => inner.dispose(),
    };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await replay(record, { executor, signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'EXECUTION_CANCELLED' });
    expect(seen[0]?.aborted).toBe(true);
    const already = await replay(record, { executor, signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(already).toMatchObject({ code: 'EXECUTION_CANCELLED' });
  });

  it('never hands the executor a retainHandles request, whatever the record holds', async () => {
    const { record } = await recorded('async () => 1');
    const executor = new VmExecutor();
    await replay(record, { executor });
    expect(executor.requests[0]?.retainHandles).toBe(false);
  });
});

describe('record on CodemodeExecutor', () => {
  it('carries the record on the result with record: true, and replays it on the native executor', async () => {
    const executor = new CodemodeExecutor(new VmExecutor());
    const counted = { calls: 0 };
    const providers = [
      { name: 'db', fns: { 'find-user': async (id: number) => (counted.calls++, { id, name: 'Ada' }) } },
    ];
    const code = 'const user = await db.find_user(7)\nuser.name';
    const result = await executor.execute(code, providers, { record: true });
    expect(result).toMatchObject({ result: 'Ada', logs: [] });
    const record = result.record!;
    expect(record.request.providers).toEqual([{ name: 'db', tools: ['find_user'] }]);
    expect(record.calls).toMatchObject([
      { provider: 'db', tool: 'find_user', args: [7], result: { id: 7, name: 'Ada' } },
    ]);
    expect(record.request.countHostWaits).toBe(true);
    expectValid(record);
    const comparison = await replay(record, { executor: new VmExecutor() });
    expect(comparison).toMatchObject({ identical: true });
    expect(counted.calls).toBe(1);
  });

  it('hands the record to a host-supplied onRecord, that of a rejected run included', async () => {
    const onRecord = vi.fn();
    const native = new VmExecutor();
    const executor = new CodemodeExecutor(native);
    await executor.execute('1 + 1', [], { record: { onRecord } });
    expect(onRecord).toHaveBeenCalledTimes(1);
    expect(onRecord.mock.calls[0]![0]).toMatchObject({ outcome: { result: 2 } });
    vi.spyOn(native, 'execute').mockRejectedValueOnce(new ExecutorError('EXECUTOR_DISPOSED', 'disposed'));
    await expect(executor.execute('1 + 1', [], { record: { onRecord } })).rejects.toThrow('disposed');
    expect(onRecord).toHaveBeenCalledTimes(2);
    const failed = onRecord.mock.calls[1]![0] as RunRecord;
    expect(failed.outcome).toEqual({ rejected: { message: 'disposed', code: 'EXECUTOR_DISPOSED' } });
    expectValid(failed);
  });

  it('reports a throwing onRecord on console.warn and returns the run as it was', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const executor = new CodemodeExecutor(new VmExecutor());
    const onRecord = () => {
      throw new Error('storage is full');
    };
    const result = await executor.execute('6 * 7', [], { record: { onRecord } });
    expect(result).toMatchObject({ result: 42, logs: [] });
    expect(warn).toHaveBeenCalledWith(formatOnRecordFailed('storage is full'));
  });

  it('records nothing unasked: the result carries no record', async () => {
    const executor = new CodemodeExecutor(new VmExecutor());
    const result = await executor.execute('1 + 1', []);
    expect(result).toEqual({ result: 2, logs: [] });
    expect(await executor.execute('1 + 1', [], { record: false })).toEqual({ result: 2, logs: [] });
  });

  it('records the native outcome of a timed-out run, which the dialect renders as its own text', async () => {
    const executor = new CodemodeExecutor(new VmExecutor());
    const result = await executor.execute('await new Promise(() => {})', [], { record: true, timeout: 50 });
    expect(result.error).toBe(TIMEOUT_MESSAGE);
    expect(ExecutionTimeoutError.matches(result.record!.outcome.error!)).toBe(true);
    expect(result.record!.request.timeout).toBe(50);
    expect(await replay(result.record!, { executor: new VmExecutor() })).toMatchObject({ identical: true });
  });

  it('refuses a record value it cannot read, naming what it takes', async () => {
    const executor = new CodemodeExecutor(new VmExecutor());
    const error = await executor.execute('1', [], { record: 'yes' as never }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((error as Error).message).toBe(
      'record must be true, false, or an object of record options ({maxBytes?, onRecord?}); got "yes"',
    );
  });
});
