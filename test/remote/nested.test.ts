/**
 * Nested runs through a real daemon: a tool of a running execution calls `execute()` on the same
 * remote executor (upstream's `codemode.run`). The client names the parent call, and the daemon
 * runs the nested call inside that call's tool call context, so IsolateExecutor admits it beyond
 * `maxWorkers` instead of queueing it behind its own parent. Unrelated calls name no parent, so
 * they queue and are never refused as nested runs past `pool.maxNestedRuns`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { createEnvelopeDispatch } from '../../src/protocol/dispatch.js';
import type { Dispatch } from '../../src/protocol/types.js';
import { connect } from '../../src/remote/index.js';
import { NodeWebSocket } from '../support/client.js';
import { startDaemon, stopAllDaemons } from '../support/daemon.js';
import { openRawSession } from '../support/raw-session.js';
import { sendUnrelatedRuns, unrelatedRunsExpected } from '../support/unrelated-runs.js';

afterAll(stopAllDaemons);

it('a run started from a tool call completes on a daemon of one sandbox process', async () => {
  const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
  const executor = await connect(daemon.url, { websocket: NodeWebSocket });
  try {
    const providers = [{ name: 'codemode', tools: ['run'] }];
    const dispatch: Dispatch = createEnvelopeDispatch(
      {
        codemode: async (_tool, [code]) => {
          const outcome = await executor.execute({ code: code as string, providers, dispatch, timeout: 20_000 });
          if (outcome.error !== undefined) throw new Error(outcome.error);
          return outcome.result;
        },
      },
      { active: true },
    );
    const outcome = await executor.execute({
      code: 'async () => { const inner = await codemode.run("async () => codemode.run(\\"async () => 6 * 7\\")"); return { inner } }',
      providers,
      dispatch,
      timeout: 20_000,
    });
    expect(outcome).toEqual({ result: { inner: 42 }, logs: [] });
  } finally {
    await executor.dispose();
  }
});

it('forty concurrent unrelated executions on a daemon of two sandbox processes all queue, and a nested run from one completes', async () => {
  const daemon = await startDaemon(['--max-workers', '2', '--spare', '0']);
  const executor = await connect(daemon.url, { websocket: NodeWebSocket });
  try {
    const outcomes = await sendUnrelatedRuns(executor, 20_000);
    expect(outcomes).toEqual(unrelatedRunsExpected);
  } finally {
    await executor.dispose();
  }
}, 180_000);

it('a parent must be a non-empty string, and one naming a call of another connection is ignored: that call queues', async () => {
  const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
  const holder = await openRawSession(daemon.url);
  const stranger = await openRawSession(daemon.url);
  try {
    const refused = await stranger.remote.execute!({
      code: 'async () => 1',
      dispatch: null,
      outboundMode: 'default',
      parent: 7,
    }).catch((error: { code?: unknown; message?: unknown }) => [error.code, error.message]);
    expect(refused).toEqual(['INVALID_REQUEST', 'execute: request.parent must be a non-empty string or absent, got 7']);

    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let toolCalled = () => {};
    const holding = new Promise<void>((resolve) => {
      toolCalled = resolve;
    });
    const dispatch: Dispatch = createEnvelopeDispatch(
      {
        codemode: async () => {
          toolCalled();
          await released;
          return 'released';
        },
      },
      { active: true },
    );
    // Call "1" of the holder takes the only sandbox process and waits in its tool call.
    const held = holder.remote.execute!({
      code: 'async () => codemode.hold()',
      dispatch,
      providers: [{ name: 'codemode', tools: ['hold'] }],
      outboundMode: 'default',
      callId: '1',
    });
    await holding;
    const request = { code: 'async () => 6 * 7', dispatch: null, outboundMode: 'default', parent: '1' };
    // The same parent named from another connection lends nothing: that call waits for the process.
    let strangerSettled = false;
    const strangers = stranger.remote.execute!({ ...request, callId: '2' }).finally(() => {
      strangerSettled = true;
    });
    // From the holder's own connection it is a nested run, admitted beyond --max-workers.
    expect(await holder.remote.execute!({ ...request, callId: '2' })).toMatchObject({ result: 42 });
    await sleep(500);
    expect(strangerSettled).toBe(false);
    release();
    expect(await held).toMatchObject({ result: 'released' });
    expect(await strangers).toMatchObject({ result: 42 });
  } finally {
    holder.close();
    stranger.close();
  }
});

it('a nested run goes on its parent session, so it is recognised after a rotation', async () => {
  const daemon = await startDaemon(['--max-workers', '1', '--spare', '0']);
  // Each finished execution retires the session: the second nested run is sent after a rotation.
  const executor = await connect(daemon.url, { websocket: NodeWebSocket, rotateAfterExecutions: 1 });
  try {
    const providers = [{ name: 'codemode', tools: ['run'] }];
    const dispatch: Dispatch = createEnvelopeDispatch(
      {
        codemode: async (_tool, [code]) => {
          const outcome = await executor.execute({ code: code as string, providers, dispatch, timeout: 5_000 });
          if (outcome.error !== undefined) throw new Error(outcome.error);
          return outcome.result;
        },
      },
      { active: true },
    );
    const outcome = await executor.execute(
      {
        code: 'async () => [await codemode.run("async () => 1"), await codemode.run("async () => 2")]',
        providers,
        dispatch,
        timeout: 10_000,
      },
      { signal: AbortSignal.timeout(20_000) },
    );
    expect(outcome).toEqual({ result: [1, 2], logs: [] });
  } finally {
    await executor.dispose();
  }
});
