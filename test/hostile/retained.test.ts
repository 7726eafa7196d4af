/**
 * Retained executions on the real workerd: one execution per process, retained ones included, and
 * their bounds (`pool.maxRetained`, `pool.retainedIdleTimeoutMs`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isolateText } from '../../src/isolate/host/texts.js';
import { IsolateExecutor } from '../../src/isolate/index.js';
import type { ExecutorError } from '../../src/protocol/errors.js';
import { HANDLE_KEY } from '../../src/protocol/types.js';
import { isAlive, waitFor } from '../support/processes.js';

let executor: IsolateExecutor | undefined;

afterEach(async () => {
  await executor?.dispose();
  executor = undefined;
});

function handleOf(result: unknown, name: string): string {
  return (result as Record<string, Record<string, string>>)[name]![HANDLE_KEY]!;
}

async function rejectionOf(call: Promise<unknown>): Promise<ExecutorError> {
  return call.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: ExecutorError) => error,
  );
}

/** A retained execution whose handles report a counter kept in its closure. */
const COUNTER = 'async () => { let n = 0; return { next: () => ++n } }';

describe('a process that holds a retained execution', () => {
  it('runs no other execution: its memory is charged to the retained execution alone', async () => {
    executor = new IsolateExecutor({ timeout: 30_000, pool: { maxWorkers: 1, memoryLimitMb: 512 } });
    // 440 MB kept alive by the retained closure, below the 512 MB cap of its process.
    const held = await executor.execute({
      code: 'async () => { const big = new Uint8Array(440 * 2 ** 20).fill(7); return { size: () => big.length } }',
      retainHandles: true,
    });
    expect(held.error).toBeUndefined();
    const holder = executor.stats().members.find((member) => member.retained === 1);
    expect(holder?.state).toBe('draining');
    // An unrelated run of 100 MB: with the holder's 440 MB it would pass the cap in a shared process.
    const unrelated = await executor.execute({
      code: 'async () => { const buffer = new Uint8Array(100 * 2 ** 20).fill(1); return buffer[12345] }',
    });
    expect(unrelated).toEqual({ result: 1, logs: [] });
    const invoked = await executor.invokeHandle({
      executionId: held.executionId!,
      handle: handleOf(held.result, 'size'),
    });
    expect(invoked.result).toBe(440 * 2 ** 20);
  });

  it('ends once its retained execution is closed, and a later call is told it was closed', async () => {
    executor = new IsolateExecutor({ pool: { maxWorkers: 1 } });
    const held = await executor.execute({ code: COUNTER, retainHandles: true });
    const executionId = held.executionId!;
    const holder = executor.stats().members.find((member) => member.retained === 1)!;
    await executor.closeHandles(executionId);
    await waitFor(() => !isAlive(holder.pid), 'the holder to end');
    const error = await rejectionOf(executor.invokeHandle({ executionId, handle: handleOf(held.result, 'next') }));
    expect(error.code).toBe('HANDLE_NOT_FOUND');
    expect(error.message).toBe(isolateText.executionClosed(executionId));
  });
});

describe('pool.maxRetained', () => {
  it('refuses one retained execution more, naming the cap, and takes one again once another is closed', async () => {
    executor = new IsolateExecutor({ pool: { maxWorkers: 2, maxRetained: 2 } });
    const first = await executor.execute({ code: COUNTER, retainHandles: true });
    await executor.execute({ code: COUNTER, retainHandles: true });
    const refused = await rejectionOf(executor.execute({ code: COUNTER, retainHandles: true }));
    expect(refused.code).toBe('LIMIT_EXCEEDED');
    expect(refused.message).toBe(isolateText.retainedLimit(2));
    expect(refused.message).toContain('pool.maxRetained');
    // A run that retains nothing is not bound by it.
    expect(await executor.execute({ code: 'async () => 1' })).toEqual({ result: 1, logs: [] });
    expect(executor.stats()).toMatchObject({ retained: 2, maxRetained: 2 });
    await executor.closeHandles(first.executionId!);
    const again = await executor.execute({ code: COUNTER, retainHandles: true });
    expect(again.executionId).toBeTypeOf('string');
  });
});

describe('pool.retainedIdleTimeoutMs', () => {
  it('closes a retained execution idle past it, ends its process, and says so to a later call', async () => {
    executor = new IsolateExecutor({ pool: { maxWorkers: 1, retainedIdleTimeoutMs: 1_500 } });
    const closed: string[] = [];
    executor.observeRetainedClosed((executionId) => closed.push(executionId));
    const held = await executor.execute({ code: COUNTER, retainHandles: true });
    const executionId = held.executionId!;
    const next = handleOf(held.result, 'next');
    const holder = executor.stats().members.find((member) => member.retained === 1)!;
    // A call resets the idle clock: used every 500 ms, it stays open past the time-to-live.
    for (let call = 1; call <= 4; call += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await executor.invokeHandle({ executionId, handle: next })).result).toBe(call);
    }
    expect(executor.stats().retained).toBe(1);
    await waitFor(() => executor!.stats().retainedOldestIdleMs >= 200, 'the execution to be idle a while');
    await waitFor(() => executor!.stats().retained === 0, 'the time-to-live to close it');
    await waitFor(() => !isAlive(holder.pid), 'its process to end');
    expect(closed).toEqual([executionId]);
    const error = await rejectionOf(executor.invokeHandle({ executionId, handle: next }));
    expect(error.code).toBe('HANDLE_NOT_FOUND');
    expect(error.message).toBe(isolateText.executionExpired(executionId, 1_500));
  });
});
