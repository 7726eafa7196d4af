/**
 * The pool: its queue bound, dispose, recycling, concurrency and options, on the real workerd.
 * Each test that needs a pool shape of its own builds a small executor and disposes it.
 */
import { describe, expect, it } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { defaultMemoryBudgetMb, IsolateExecutor } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch, type ProviderHandler } from '../../../../src/protocol/dispatch.js';
import type { Dispatch } from '../../../../src/protocol/types.js';
import { isAlive, waitFor } from '../../../support/processes.js';

function dispatchFor(handlers: Record<string, ProviderHandler>): Dispatch {
  return createEnvelopeDispatch(handlers, { active: true });
}

/** A tool that holds its run until the test opens the gate, and counts who is waiting. */
function gateTool() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let waiting = 0;
  const dispatch = dispatchFor({
    gate: async () => {
      waiting += 1;
      await opened;
      return 'through';
    },
  });
  return { dispatch, open, waiting: () => waiting };
}

const gated = (dispatch: Dispatch) => ({
  code: 'async () => gate.pass()',
  providers: [{ name: 'gate', tools: ['pass'] }],
  dispatch,
});

describe('the queue and dispose', () => {
  it('refuses work beyond maxQueue, serves the queue in order, and dispose rejects what is left', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, maxQueue: 1 } });
    try {
      const first = gateTool();
      const running = executor.execute(gated(first.dispatch));
      const queued = executor.execute({ code: 'async () => "queued ran"' });
      await expect(executor.execute({ code: 'async () => "refused"' })).rejects.toMatchObject({
        code: 'QUEUE_FULL',
        retryable: true,
        message: isolateText.queueFull(1),
      });
      await waitFor(() => first.waiting() === 1, 'the first run to reach its tool');
      first.open();
      expect(await running).toEqual({ result: 'through', logs: [] });
      expect(await queued).toEqual({ result: 'queued ran', logs: [] });

      const second = gateTool();
      // Settled into values at once, so their rejections during dispose are handled.
      const inFlight = executor.execute(gated(second.dispatch)).catch((error: unknown) => error);
      const waiting = executor.execute({ code: 'async () => "never runs"' }).catch((error: unknown) => error);
      await waitFor(() => second.waiting() === 1, 'the run to reach its tool');
      const pids = executor.stats().members.map((member) => member.pid);
      expect(pids.length).toBeGreaterThan(0);
      await executor.dispose();
      expect(await inFlight).toMatchObject({ code: 'EXECUTOR_DISPOSED', message: isolateText.disposed });
      expect(await waiting).toMatchObject({ code: 'EXECUTOR_DISPOSED', message: isolateText.disposed });
      await expect(executor.execute({ code: 'async () => 1' })).rejects.toMatchObject({ code: 'EXECUTOR_DISPOSED' });
      await expect(executor.invokeHandle({ executionId: 'x', handle: '1' })).rejects.toMatchObject({
        code: 'EXECUTOR_DISPOSED',
      });
      await waitFor(() => pids.every((pid) => !isAlive(pid)), 'the disposed processes to end');
      second.open();
    } finally {
      await executor.dispose();
    }
  });
});

describe('recycling', () => {
  /** Runs one execution and reports the pid of the workerd that ran it. */
  async function pidOfRun(executor: IsolateExecutor): Promise<number> {
    const dispatch = dispatchFor({ probe: () => executor.stats().members.find((member) => member.busy)!.pid });
    const outcome = await executor.execute({
      code: 'async () => probe.pid()',
      providers: [{ name: 'probe', tools: ['pid'] }],
      dispatch,
    });
    return outcome.result as number;
  }

  it('replaces a process after recycleAfterRuns runs', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, recycleAfterRuns: 2 } });
    try {
      const pids = [await pidOfRun(executor), await pidOfRun(executor), await pidOfRun(executor)];
      expect(pids[1]).toBe(pids[0]);
      expect(pids[2]).not.toBe(pids[0]);
      await waitFor(() => !isAlive(pids[0]!), 'the recycled process to end');
    } finally {
      await executor.dispose();
    }
  });

  it('replaces a process whose resident set passed maxRssMb', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, maxRssMb: 1 } });
    try {
      const first = await pidOfRun(executor);
      const second = await pidOfRun(executor);
      expect(second).not.toBe(first);
      await waitFor(() => !isAlive(first), 'the recycled process to end');
    } finally {
      await executor.dispose();
    }
  });
});

describe('concurrency', () => {
  it('runs maxWorkers executions at once, one per process', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 2, spare: 0 } });
    try {
      let arrived = 0;
      let release: () => void = () => {};
      const bothHere = new Promise<void>((resolve) => {
        release = resolve;
      });
      const dispatch = dispatchFor({
        meet: async () => {
          const pid = executor
            .stats()
            .members.filter((member) => member.busy)
            .map((member) => member.pid);
          arrived += 1;
          if (arrived === 2) release();
          // With one process at a time this never resolves, and the wall-clock bound ends the run.
          await bothHere;
          return pid;
        },
      });
      const request = {
        code: 'async () => meet.here()',
        providers: [{ name: 'meet', tools: ['here'] }],
        dispatch,
        timeout: 20_000,
        countHostWaits: true,
      };
      const [a, b] = await Promise.all([executor.execute(request), executor.execute(request)]);
      expect(a.error).toBeUndefined();
      expect(b.error).toBeUndefined();
      expect(executor.stats().members).toHaveLength(2);
      expect(new Set(executor.stats().members.map((member) => member.pid)).size).toBe(2);
    } finally {
      await executor.dispose();
    }
  });
});

describe('construction options', () => {
  const cases: [string, unknown, string][] = [
    ['a non-object', 5, isolateText.optionsNotObject('5')],
    [
      'an unknown option',
      { timeOut: 5 },
      isolateText.optionUnknown(
        'timeOut',
        'timeout, maxTimeout, cpuTimeout, turnGraceMs, outbound, pool, limits, confinement',
        'timeout',
      ),
    ],
    [
      'an unknown pool option',
      { pool: { maxWorker: 2 } },
      isolateText.optionUnknown(
        'pool.maxWorker',
        'pool.maxWorkers, pool.minWorkers, pool.spare, pool.idleTimeoutMs, pool.maxStarting, pool.maxQueue, pool.recycleAfterRuns, pool.maxRssMb, pool.heapLimitMb, pool.memoryLimitMb, pool.memoryBudgetMb, pool.cgroup, pool.maxRetained, pool.retainedIdleTimeoutMs, pool.programStartTimeoutMs, pool.runsPerMember, pool.maxNestedRuns',
        'pool.maxWorkers',
      ),
    ],
    ['maxWorkers 0', { pool: { maxWorkers: 0 } }, isolateText.optionInvalid('pool.maxWorkers', 'an integer >= 1', '0')],
    [
      'a memoryBudgetMb below 16',
      { pool: { memoryBudgetMb: 8 } },
      isolateText.optionInvalid('pool.memoryBudgetMb', 'an integer >= 16', '8'),
    ],
    [
      'a negative minWorkers',
      { pool: { minWorkers: -1 } },
      isolateText.optionInvalid('pool.minWorkers', 'an integer >= 0', '-1'),
    ],
    ['minWorkers above maxWorkers', { pool: { minWorkers: 3, maxWorkers: 2 } }, isolateText.optionMinAboveMax(3, 2)],
    [
      'a fractional idleTimeoutMs',
      { pool: { idleTimeoutMs: 0.5 } },
      isolateText.optionInvalid('pool.idleTimeoutMs', 'an integer >= 0', '0.5'),
    ],
    [
      'maxStarting 0',
      { pool: { maxStarting: 0 } },
      isolateText.optionInvalid('pool.maxStarting', 'an integer >= 1', '0'),
    ],
    [
      'a cpuTimeout that is not a number',
      { cpuTimeout: '1s' },
      isolateText.optionInvalid('cpuTimeout', 'a positive finite number', '"1s"'),
    ],
    ['a fractional spare', { pool: { spare: 1.5 } }, isolateText.optionInvalid('pool.spare', 'an integer >= 0', '1.5')],
    [
      'a negative maxQueue',
      { pool: { maxQueue: -1 } },
      isolateText.optionInvalid('pool.maxQueue', 'an integer >= 0', '-1'),
    ],
    [
      'a tiny heap',
      { pool: { heapLimitMb: 8 } },
      isolateText.optionInvalid('pool.heapLimitMb', 'an integer >= 16', '8'),
    ],
    [
      'a zero maxRssMb',
      { pool: { maxRssMb: 0 } },
      isolateText.optionInvalid('pool.maxRssMb', 'a positive finite number', '0'),
    ],
    [
      'an unknown limit',
      { limits: { maxResult: 1 } },
      isolateText.optionUnknown(
        'limits.maxResult',
        'limits.maxCodeBytes, limits.maxRequestBytes, limits.maxResultBytes, limits.maxToolArgsBytes, limits.maxToolResultBytes, limits.maxConcurrentToolCalls, limits.maxConcurrentToolArgsBytes, limits.maxLogLines, limits.maxLogBytes, limits.maxRequestBodyBytes, limits.maxResponseBodyBytes, limits.maxConcurrentFetches, limits.maxProcessOutputBytes',
        'limits.maxResultBytes',
      ),
    ],
    [
      'a tool result cap above what workerd can carry',
      { limits: { maxToolResultBytes: 64 * 2 ** 20 } },
      isolateText.optionInvalid('limits.maxToolResultBytes', 'an integer from 1 to 31457280', '67108864'),
    ],
    [
      'a memory cap below the floor',
      { pool: { memoryLimitMb: 8 } },
      isolateText.optionInvalid('pool.memoryLimitMb', 'an integer >= 64', '8'),
    ],
    [
      'a relative cgroup path',
      { pool: { cgroup: 'codemode.slice' } },
      isolateText.optionInvalid('pool.cgroup', 'an absolute path of a cgroup v2 directory', '"codemode.slice"'),
    ],
    [
      'a negative maxRetained',
      { pool: { maxRetained: -1 } },
      isolateText.optionInvalid('pool.maxRetained', 'an integer >= 0', '-1'),
    ],
    [
      'a retainedIdleTimeoutMs of 0',
      { pool: { retainedIdleTimeoutMs: 0 } },
      isolateText.optionInvalid('pool.retainedIdleTimeoutMs', 'an integer from 1 to 2147483647', '0'),
    ],
    [
      'a fractional maxNestedRuns',
      { pool: { maxNestedRuns: 1.5 } },
      isolateText.optionInvalid('pool.maxNestedRuns', 'an integer >= 0', '1.5'),
    ],
    [
      'a string timeout',
      { timeout: '60s' },
      isolateText.optionInvalid('timeout', 'a number of milliseconds >= 0, null, or undefined', '"60s"'),
    ],
    [
      'a timeout above maxTimeout',
      { timeout: 2_000, maxTimeout: 1_000 },
      isolateText.optionTimeoutAboveMax(2_000, 1_000),
    ],
    [
      'an outbound that is not a function',
      { outbound: 'allow' },
      isolateText.optionInvalid('outbound', 'a function (Request) => Response, null or undefined', '"allow"'),
    ],
  ];
  for (const [what, options, message] of cases) {
    it(`refuses ${what}, naming the option`, () => {
      expect(() => new IsolateExecutor(options as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_REQUEST', message }),
      );
    });
  }

  it('starts no process before the first execution', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1 } });
    const { confinement: _, ...pool } = executor.stats();
    expect(pool).toEqual({
      members: [],
      states: { starting: 0, idle: 0, busy: 0, draining: 0 },
      starting: 0,
      queued: 0,
      maxWorkers: 1,
      memory: { budgetMb: defaultMemoryBudgetMb(), usedMb: 0, peakMb: 0 },
      spawns: 0,
      ends: { reaped: 0, recycled: 0, killed: 0, died: 0 },
      retained: 0,
      maxRetained: 64,
      retainedOldestIdleMs: 0,
      starts: {
        count: 0,
        meanMs: 0,
        meanByStepMs: { directory: 0, config: 0, command: 0, spawn: 0, ready: 0, connect: 0 },
      },
    });
    await executor.dispose();
  });
});
