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
import type { ExecuteRequest } from '../../src/protocol/types.js';
import { DEFAULT_MAX_RECORD_BYTES, RECORD_ROWS } from '../../src/record/record-options.js';
import { recordExecution } from '../../src/record/recorder.js';
import { replay } from '../../src/record/replay.js';
import { formatOnRecordFailed, formatReplayCallDiverged } from '../../src/record/texts.js';
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
      'replay() takes a run record (format "codemode-run-record", schemaVersion 1, schema/run-record.schema.json): its schemaVersion is 2',
    );
    const nothing = await replay(null as never, { executor: new VmExecutor() }).catch((e: unknown) => e);
    expect((nothing as Error).message).toContain('got no object');
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
