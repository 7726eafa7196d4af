/**
 * cpuTimeout on the real workerd: a bound on the CPU time a run's process spends, beside its
 * wall-clock timeout. A spin ends at its CPU bound while a long wall-clock bound is still far off;
 * a program that waits on a tool spends almost none; under load a run is judged by the CPU it
 * used, not by the time it waited for a core.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { RunClock } from '../../../../src/isolate/host/run/run-clocks.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { IsolateExecutor, type RunReport } from '../../../../src/isolate/index.js';
import { createEnvelopeDispatch } from '../../../../src/protocol/dispatch.js';
import { ExecutionTimeoutError } from '../../../../src/protocol/errors.js';
import { formatCpuTimeout } from '../../../../src/protocol/texts.js';
import { SPIN_TURN_GRACE_MS, waitFor } from '../../../support/processes.js';

const SPIN = 'async () => { while (true) {} }';
/** A wall-clock bound no test here comes near: a run that ends did so by its CPU bound. */
const FAR_OFF = 120_000;

function reportsOf(executor: IsolateExecutor): RunReport[] {
  const reports: RunReport[] = [];
  executor.observeRuns((report) => reports.push(report));
  return reports;
}

describe('a spin', () => {
  it('ends at its CPU bound, with the text that names it, while the wall-clock bound is far off', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    const reports = reportsOf(executor);
    try {
      const outcome = await executor.execute({
        code: 'async () => { console.log("before"); while (true) {} }',
        cpuTimeout: 300,
        timeout: FAR_OFF,
      });
      expect(outcome.error).toBe(formatCpuTimeout(300));
      expect(outcome.result).toBeUndefined();
      expect(reports).toHaveLength(1);
      if (process.platform === 'linux') expect(reports[0]!.cpuMs).toBeGreaterThanOrEqual(300);
      // The spinning process was killed, and the next run gets a fresh one.
      await waitFor(() => executor.stats().ends.killed === 1, 'the spinning process to end');
      await expect(executor.execute({ code: 'async () => "next"' })).resolves.toMatchObject({ result: 'next' });
    } finally {
      await executor.dispose();
    }
  });

  it('cancelled through its signal, is still reported with the CPU time it spent; one aborted before it ran is not', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    const reports = reportsOf(executor);
    try {
      const before = new AbortController();
      before.abort();
      await expect(executor.execute({ code: SPIN }, { signal: before.signal })).rejects.toMatchObject({
        code: 'EXECUTION_CANCELLED',
      });
      const controller = new AbortController();
      const spinning = executor.execute({ code: SPIN, timeout: FAR_OFF }, { signal: controller.signal });
      // Long enough to spend CPU time in its program, whatever the load.
      await waitFor(() => executor.stats().members.some((member) => member.busy), 'the spin to run');
      await new Promise((resolve) => setTimeout(resolve, 300));
      controller.abort();
      await expect(spinning).rejects.toMatchObject({ code: 'EXECUTION_CANCELLED' });
      await waitFor(() => reports.length > 0, 'the cancelled run to be reported');
      expect(reports).toHaveLength(1);
      expect(reports[0]!.kind).toBe('execute');
      if (process.platform === 'linux') expect(reports[0]!.cpuMs).toBeGreaterThan(0);
    } finally {
      await executor.dispose();
    }
  });

  it('ends at its CPU bound while a tool call it started is still waiting on the host', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    try {
      const dispatch = createEnvelopeDispatch({ api: () => new Promise(() => {}) }, { active: true });
      const outcome = await executor.execute({
        code: 'async () => { api.never(); await Promise.resolve(); while (true) {} }',
        providers: [{ name: 'api', tools: ['never'] }],
        dispatch,
        cpuTimeout: 250,
        timeout: FAR_OFF,
      });
      expect(outcome.error).toBe(formatCpuTimeout(250));
    } finally {
      await executor.dispose();
    }
  });

  it('in a retained function called through invokeHandle, ends at the call own CPU bound', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    try {
      const retained = await executor.execute({
        code: 'async () => ({ spin: () => { while (true) {} } })',
        retainHandles: true,
      });
      const handle = (retained.result as { spin: { __codemode_handle__: string } }).spin.__codemode_handle__;
      const outcome = await executor.invokeHandle({
        executionId: retained.executionId!,
        handle,
        cpuTimeout: 200,
        timeout: FAR_OFF,
      });
      expect(outcome.error).toBe(formatCpuTimeout(200));
    } finally {
      await executor.dispose();
    }
  });
});

describe('a program that waits', () => {
  it('on a tool for 2 s succeeds under a 100 ms cpuTimeout: waiting costs no CPU time', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    const reports = reportsOf(executor);
    try {
      const dispatch = createEnvelopeDispatch(
        { api: () => new Promise((resolve) => setTimeout(() => resolve('waited'), 2_000)) },
        { active: true },
      );
      const outcome = await executor.execute({
        code: 'async () => api.slow()',
        providers: [{ name: 'api', tools: ['slow'] }],
        dispatch,
        cpuTimeout: 100,
        countHostWaits: true,
        timeout: FAR_OFF,
      });
      expect(outcome).toEqual({ result: 'waited', logs: [] });
      if (process.platform === 'linux') expect(reports[0]!.cpuMs).toBeLessThan(100);
    } finally {
      await executor.dispose();
    }
  });

  it('on its own timer succeeds too', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    try {
      const outcome = await executor.execute({
        code: 'async () => { await new Promise((r) => setTimeout(r, 1500)); return "slept" }',
        cpuTimeout: 100,
        timeout: FAR_OFF,
      });
      expect(outcome).toEqual({ result: 'slept', logs: [] });
    } finally {
      await executor.dispose();
    }
  });
});

describe('the bound under load', () => {
  it('judges a CPU-heavy run by the CPU it used, not by the time it waited for a core', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 3 * availableParallelism() + 1, spare: 0 } });
    const reports = reportsOf(executor);
    const work = 'async () => { let x = 0; for (let i = 0; i < 1e8; i++) x = (x + i * 7) % 1000003; return x }';
    try {
      // Alone, to learn what the work costs on this machine.
      const alone = await executor.execute({ code: work, timeout: FAR_OFF });
      expect(alone.error).toBeUndefined();
      const cost = reports[0]!.cpuMs;
      if (cost === undefined) return; // Not Linux: no CPU accounting.
      // Beside three spins per core it waits for a core most of its wall-clock time, about three
      // times its CPU cost; a bound of twice its cost still lets it finish.
      const spins = new AbortController();
      const spinners = Array.from({ length: 3 * availableParallelism() }, () =>
        executor.execute({ code: SPIN, timeout: FAR_OFF }, { signal: spins.signal }).catch((error: unknown) => error),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const loaded = await executor.execute({ code: work, cpuTimeout: 2 * cost + 100, timeout: FAR_OFF });
      spins.abort();
      expect(loaded).toEqual({ result: alone.result, logs: [] });
      for (const stopped of await Promise.all(spinners)) expect(stopped).toMatchObject({ code: 'EXECUTION_CANCELLED' });
    } finally {
      await executor.dispose();
    }
  });
});

describe('defaults and refusals', () => {
  it('takes the constructor cpuTimeout when a request sets none, and a request may set its own', async () => {
    const executor = new IsolateExecutor({ cpuTimeout: 150, pool: { maxWorkers: 1, spare: 0 } });
    try {
      await expect(executor.execute({ code: SPIN, timeout: FAR_OFF })).resolves.toMatchObject({
        error: formatCpuTimeout(150),
      });
      await expect(executor.execute({ code: SPIN, timeout: FAR_OFF, cpuTimeout: 350 })).resolves.toMatchObject({
        error: formatCpuTimeout(350),
      });
    } finally {
      await executor.dispose();
    }
  });

  it('is off by default: a spin runs to its wall-clock bound and gets the timeout text', async () => {
    const executor = new IsolateExecutor({ turnGraceMs: SPIN_TURN_GRACE_MS, pool: { maxWorkers: 1, spare: 0 } });
    try {
      await expect(executor.execute({ code: SPIN, timeout: 400 })).resolves.toMatchObject({
        error: ExecutionTimeoutError.format(400),
      });
    } finally {
      await executor.dispose();
    }
  });

  it('refuses a cpuTimeout that is no bound, naming the field or the option', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
    try {
      for (const [value, shown] of [
        [0, '0'],
        [-1, '-1'],
        [Number.NaN, 'NaN'],
        ['100', '"100"'],
        [null, 'null'],
      ] as const) {
        await expect(executor.execute({ code: 'async () => 1', cpuTimeout: value as never })).rejects.toMatchObject({
          code: 'INVALID_REQUEST',
          message: isolateText.cpuTimeoutInvalid('request.cpuTimeout', shown),
        });
      }
      await expect(executor.invokeHandle({ executionId: 'x', handle: 'h', cpuTimeout: -5 })).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        message: isolateText.cpuTimeoutInvalid('request.cpuTimeout', '-5'),
      });
    } finally {
      await executor.dispose();
    }
    expect(() => new IsolateExecutor({ cpuTimeout: 0 })).toThrow(
      expect.objectContaining({
        code: 'INVALID_REQUEST',
        message: isolateText.optionInvalid('cpuTimeout', 'a positive finite number', '0'),
      }),
    );
  });
});

describe('the run clock over a host wait', () => {
  it("reads the process's CPU time once as the wait starts and once as it ends, and spends what it used", () => {
    let reads = 0;
    let cpu = 1_000;
    const process = {
      cpuMs: () => {
        reads += 1;
        return cpu;
      },
    };
    let expired = false;
    const clock = new RunClock(60_000, false, process, () => (expired = true));
    clock.start();
    const atStart = reads;
    clock.beginHostWait();
    expect(reads - atStart).toBe(1);
    // The sandbox spins through the wait: 40 s of its CPU time is spent from the budget.
    cpu += 40_000;
    clock.endHostWait();
    expect(reads - atStart).toBe(2);
    clock.beginHostWait();
    cpu += 30_000;
    clock.endHostWait();
    // 70 s of CPU time spent during waits passes the 60 s budget: the clock expires at once.
    return new Promise<void>((resolve) => setTimeout(resolve, 50)).then(() => {
      clock.stop();
      expect(expired).toBe(true);
    });
  });
});
