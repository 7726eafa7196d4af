/**
 * What `/readyz` learns from the daemon's start-up probe: a sandbox that runs makes the daemon
 * ready, whatever the probe's program did; only an executor that cannot start one keeps it out.
 */
import { describe, expect, it } from 'vitest';
import { type ExecuteResult, type Executor, ExecutorError } from '../../../src/protocol/index.js';
import { Readiness } from '../../../src/server/observe/readiness.js';

function executorAnswering(execute: () => Promise<ExecuteResult>): Executor {
  return {
    execute,
    invokeHandle: async () => ({ logs: [] }),
    closeHandles: async () => {},
    dispose: async () => {},
  };
}

async function afterProbe(executor: Executor) {
  const readiness = new Readiness(executor);
  readiness.start();
  await readiness.settled();
  return readiness.state(false);
}

describe('the start-up probe', () => {
  it('makes the daemon ready when the probe returns a result', async () => {
    expect(await afterProbe(executorAnswering(async () => ({ result: true, logs: [] })))).toEqual({
      ready: true,
      text: 'ready: taking new sessions',
    });
  });

  it("makes the daemon ready when the probe's program failed, since the sandbox ran it", async () => {
    const timedOut = async () => ({ error: 'Execution timed out', logs: [] });
    expect((await afterProbe(executorAnswering(timedOut))).ready).toBe(true);
  });

  it('keeps the daemon out, saying why, when the executor cannot start a sandbox', async () => {
    const unavailable = async (): Promise<ExecuteResult> => {
      throw new ExecutorError('SANDBOX_UNAVAILABLE', 'workerd could not start');
    };
    expect(await afterProbe(executorAnswering(unavailable))).toEqual({
      ready: false,
      text: 'not ready: the executor cannot start a sandbox: workerd could not start',
    });
  });

  it('makes the daemon ready when the probe is refused for another reason', async () => {
    const refused = async (): Promise<ExecuteResult> => {
      throw new ExecutorError('QUEUE_FULL', 'the queue is full');
    };
    expect((await afterProbe(executorAnswering(refused))).ready).toBe(true);
  });
});
