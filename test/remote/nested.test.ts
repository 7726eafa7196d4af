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
import { NodeWebSocket } from './support/client.js';
import { startDaemon, stopAllDaemons } from './support/daemon.js';

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
    const providers = [{ name: 'codemode', tools: ['run', 'wait'] }];
    const { promise: firstToolCall, resolve: toolCalled } = Promise.withResolvers<void>();
    const dispatch: Dispatch = createEnvelopeDispatch(
      {
        codemode: async (tool, [value]) => {
          // A tool that waits, as a program mostly does.
          toolCalled();
          if (tool === 'wait') return sleep(100, value);
          const outcome = await executor.execute({ code: value as string, providers, dispatch, timeout: 20_000 });
          if (outcome.error !== undefined) throw new Error(outcome.error);
          return outcome.result;
        },
      },
      { active: true },
    );
    const run = (index: number) => {
      const body =
        index === 20
          ? 'const inner = await codemode.run("async () => codemode.wait(6 * 7)"); return { inner }'
          : `await codemode.wait(${index}); return codemode.wait(${index})`;
      return executor.execute({ code: `async () => { ${body} }`, providers, dispatch, timeout: 20_000 });
    };
    const first = run(0);
    // The other 39 are sent while a tool call of the first is in flight, none of them from it.
    await firstToolCall;
    const outcomes = await Promise.all([first, ...Array.from({ length: 39 }, (_, index) => run(index + 1))]);
    const expected = Array.from({ length: 40 }, (_, index) => ({
      result: index === 20 ? { inner: 42 } : index,
      logs: [],
    }));
    expect(outcomes).toEqual(expected);
  } finally {
    await executor.dispose();
  }
}, 180_000);
