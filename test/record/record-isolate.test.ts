/**
 * Run records on the real executors: a record made on IsolateExecutor replays over a daemon
 * (connect()), and one made over the daemon replays on IsolateExecutor, each answered from the
 * record alone. The record is made on the caller's side, so both records have the same calls.
 */
import { describe, expect, it } from 'vitest';
import { CodemodeExecutor } from '../../src/codemode/codemode-executor.js';
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';
import type { ExecuteRequest, Executor } from '../../src/protocol/types.js';
import { recordExecution } from '../../src/record/recorder.js';
import { replay } from '../../src/record/replay.js';
import type { RunRecord } from '../../src/record/types.js';
import { isolateAndRemote } from '../support/isolate-and-remote.js';
import { expectValid } from './support/valid-record.js';

const CODE = `async () => {
  const rows = await db.query("select 1", 7)
  let failure
  try { await db.drop("users") } catch (e) { failure = e.message }
  const echoed = await db.echo(new Uint8Array([1, 2, 250]))
  console.warn("rows", rows.length)
  return { rows, failure, bytes: echoed instanceof Uint8Array ? [...echoed] : "not bytes" }
}`;

/** A database provider that counts its real calls, so a test sees that replay runs none. */
function database() {
  const real = { calls: 0 };
  const request: ExecuteRequest = {
    code: CODE,
    providers: [{ name: 'db', tools: ['query', 'drop', 'echo'] }],
    dispatch: createEnvelopeDispatch(
      {
        db: (tool, args) => {
          real.calls += 1;
          if (tool === 'drop') throw new Error('refused: drop is not allowed');
          if (tool === 'echo') return args[0];
          return [{ id: args[1] }, { id: 8 }];
        },
      },
      { active: true },
    ),
    timeout: 20_000,
  };
  return { real, request };
}

const EXPECTED_RESULT = { rows: [{ id: 7 }, { id: 8 }], failure: 'refused: drop is not allowed', bytes: [1, 2, 250] };

const executors = isolateAndRemote();

/** Records CODE on `executor`, checking the run itself and that every tool ran once. */
async function recordOn(executor: Executor): Promise<RunRecord> {
  const { real, request } = database();
  const { outcome, record } = await recordExecution(executor, request);
  expect(outcome).toEqual({ result: EXPECTED_RESULT, logs: [{ level: 'warn', message: 'rows 2' }] });
  expect(real.calls).toBe(3);
  expectValid(record);
  return record;
}

describe('a run record on the real executors', () => {
  it('made on IsolateExecutor, replays identically over the daemon', async () => {
    const record = await recordOn(executors.isolate);
    expect(record.calls).toMatchObject([
      { provider: 'db', tool: 'query', args: ['select 1', 7], result: [{ id: 7 }, { id: 8 }] },
      { provider: 'db', tool: 'drop', args: ['users'], error: 'refused: drop is not allowed' },
      {
        provider: 'db',
        tool: 'echo',
        args: [{ __codemode_binary_v1__: 'Uint8Array', data: 'AQL6' }],
        result: { __codemode_binary_v1__: 'Uint8Array', data: 'AQL6' },
      },
    ]);
    const comparison = await replay(JSON.parse(JSON.stringify(record)), { executor: executors.remote });
    expect(comparison).toMatchObject({ identical: true });
    expect(comparison.replayed.outcome).toEqual({ result: EXPECTED_RESULT });
  }, 60_000);

  it('made over the daemon, replays identically on IsolateExecutor, and the two records hold the same calls', async () => {
    const record = await recordOn(executors.remote);
    const comparison = await replay(JSON.parse(JSON.stringify(record)), { executor: executors.isolate });
    expect(comparison).toMatchObject({ identical: true });
    const local = await recordOn(executors.isolate);
    const withoutTimes = (r: RunRecord) => r.calls.map(({ startMs: _s, durationMs: _d, ...call }) => call);
    expect(withoutTimes(record)).toEqual(withoutTimes(local));
  }, 60_000);

  it('names the first divergence over the daemon, as in process', async () => {
    const record = await recordOn(executors.isolate);
    const changed = { ...record, request: { ...record.request, code: CODE.replace('"select 1", 7', '"select 1", 9') } };
    for (const executor of [executors.remote, executors.isolate]) {
      expect(await replay(changed, { executor })).toMatchObject({
        identical: false,
        divergence: {
          kind: 'call',
          index: 0,
          recorded: { args: ['select 1', 7] },
          replayed: { args: ['select 1', 9] },
        },
      });
    }
  }, 60_000);

  it('holds nothing of an outbound fetch: the run fetched through the host, the record has only the tool calls', async () => {
    const fetched: string[] = [];
    const { request } = database();
    const { outcome, record } = await recordExecution(executors.isolate, {
      ...request,
      code: 'async () => { const body = await (await fetch("https://api.example/" + (await db.query("x", 1))[1].id)).text(); return body.length }',
      outbound: (req) => {
        fetched.push(req.url);
        return new Response('outbound-body-text');
      },
    });
    expect(outcome.result).toBe('outbound-body-text'.length);
    expect(fetched).toEqual(['https://api.example/8']);
    const stored = JSON.stringify(record);
    expect(stored).not.toContain('api.example/8');
    expect(stored).not.toContain('outbound-body-text');
    expect(record.calls).toHaveLength(1);
    expect(Object.keys(record.request).sort()).toEqual(['code', 'providers', 'timeout']);
    expectValid(record);
  }, 60_000);

  it('records a value JSON cannot write as the reason, never failing the run, and replays it', async () => {
    const { request } = database();
    const { outcome, record } = await recordExecution(executors.isolate, {
      ...request,
      code: 'async () => ({ big: 10n ** 20n })',
    });
    expect(outcome.result).toEqual({ big: 10n ** 20n });
    expect(record.outcome).toEqual({ resultNotJson: expect.stringContaining('BigInt') });
    expectValid(record);
    expect(await replay(record, { executor: executors.remote })).toMatchObject({ identical: true });
  }, 60_000);

  it('comes from CodemodeExecutor over connect() with record: true, and replays there', async () => {
    const executor = new CodemodeExecutor(executors.remote);
    const providers = [{ name: 'math', fns: { 'add-one': (n: number) => n + 1 } }];
    const result = await executor.execute('const n = await math.add_one(41)\nn', providers, { record: true });
    expect(result).toMatchObject({ result: 42, logs: [] });
    expect(result.record?.calls).toMatchObject([{ provider: 'math', tool: 'add_one', args: [41], result: 42 }]);
    expect(await replay(result.record!, { executor: executors.isolate })).toMatchObject({ identical: true });
  }, 60_000);

  it('replays a record whose call the caller abandoned to its end, on IsolateExecutor and over the daemon, keeping no sandbox busy', async () => {
    // The caller gives the run up while its one call waits: the call never gets an answer.
    const controller = new AbortController();
    const request: ExecuteRequest = {
      code: 'async () => { console.log("asking"); return await poll.wait() }',
      providers: [{ name: 'poll', tools: ['wait'] }],
      dispatch: createEnvelopeDispatch(
        {
          poll: () => {
            setTimeout(() => controller.abort(), 10);
            return new Promise(() => {});
          },
        },
        { active: true },
      ),
      // The native default: the clock stops while the host answers, so nothing in the run ends the wait.
      countHostWaits: false,
    };
    const kept: RunRecord[] = [];
    const given = await recordExecution(
      executors.isolate,
      request,
      { onRecord: (r) => kept.push(r) },
      {
        signal: controller.signal,
      },
    ).catch((error: unknown) => error);
    expect(given).toMatchObject({ code: 'EXECUTION_CANCELLED' });
    const record = kept[0]!;
    expect(record.calls).toHaveLength(1);
    expect(record.calls[0]).not.toHaveProperty('durationMs');
    expect(record.outcome.rejected?.code).toBe('EXECUTION_CANCELLED');
    expectValid(record);
    for (const executor of [executors.isolate, executors.remote]) {
      const started = performance.now();
      const comparison = await replay(JSON.parse(JSON.stringify(record)), { executor });
      expect(comparison).toMatchObject({ identical: true });
      expect(performance.now() - started).toBeLessThan(15_000);
    }
    // Nothing of the replays is left running or retained in process.
    await expect.poll(() => executors.isolate.stats().states.busy, { timeout: 10_000 }).toBe(0);
    expect(executors.isolate.stats().retained).toBe(0);
  }, 60_000);

  it('keeps nothing when a stored record asks for retained handles: it is refused, naming the field', async () => {
    const record = await recordOn(executors.isolate);
    const stored = JSON.parse(JSON.stringify(record));
    stored.request.retainHandles = true;
    const refusal = await replay(stored, { executor: executors.isolate }).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'INVALID_REQUEST' });
    expect((refusal as Error).message).toContain('request has a field "retainHandles"');
    expect(executors.isolate.stats().retained).toBe(0);
  }, 60_000);
});
