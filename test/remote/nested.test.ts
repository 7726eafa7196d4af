/**
 * A nested run through a real daemon of one sandbox process: a tool of a running execution calls
 * `execute()` on the same remote executor (upstream's `codemode.run`). The client marks the call
 * nested, and the daemon runs it inside its tool call's context, so IsolateExecutor admits it
 * beyond `maxWorkers` instead of queueing it behind its own parent.
 */
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
