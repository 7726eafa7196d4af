/**
 * The elastic pool on the real workerd: it grows on demand to maxWorkers, starts at most
 * maxStarting processes at once, reaps idle members down to minWorkers and the spares, queues
 * beyond maxWorkers up to maxQueue, and reports its members by state. The default maxWorkers
 * follows the sizing rule of docs/isolate.md.
 */
import { describe, expect, it } from 'vitest';
import { withStartDelay } from '../../../../src/isolate/host/member/start-hook.js';
import { maxWorkersFor } from '../../../../src/isolate/host/options.js';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { defaultMaxWorkers, IsolateExecutor } from '../../../../src/isolate/index.js';
import type { ExecuteResult } from '../../../../src/protocol/types.js';
import { isAlive, waitFor } from '../../../support/processes.js';
import { toolGate } from '../../../support/tool-gate.js';

const through: ExecuteResult = { result: 'through', logs: [] };

describe('growth', () => {
  it('grows to maxWorkers on demand, one process per waiting program, and queues beyond it', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 5, spare: 1 } });
    try {
      const held = toolGate();
      const runs = Array.from({ length: 6 }, () => executor.execute(held.request));
      // Five programs wait on their tool at once, each in a process of its own; the sixth waits for one.
      await waitFor(() => held.waiting() === 5, 'five programs to reach their tool');
      await waitFor(() => executor.stats().states.idle === 1, 'the spare beside the busy members');
      const stats = executor.stats();
      expect(stats.states).toEqual({ starting: 0, idle: 1, busy: 5, draining: 0 });
      expect(stats.queued).toBe(1);
      expect(new Set(stats.members.filter((member) => member.busy).map((member) => member.pid)).size).toBe(5);
      expect(stats.members).toHaveLength(6);
      expect(held.waiting()).toBe(5);
      held.open();
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 6 }, () => through));
      expect(executor.stats().spawns).toBe(6);
    } finally {
      await executor.dispose();
    }
  });

  it('starts nothing before the first execution, then keeps the spares ahead of demand', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 6, spare: 2 } });
    try {
      expect(executor.stats().spawns).toBe(0);
      await expect(executor.execute({ code: 'async () => 1' })).resolves.toMatchObject({ result: 1 });
      await waitFor(() => executor.stats().starting === 0, 'the spares to start');
      expect(executor.stats().states.idle).toBeGreaterThanOrEqual(2);
      const held = toolGate();
      const runs = Array.from({ length: 4 }, () => executor.execute(held.request));
      await waitFor(() => held.waiting() === 4, 'four runs to reach their tool');
      // Four busy, and two spares again beyond them.
      await waitFor(() => executor.stats().starting === 0, 'the spares to be replenished');
      expect(executor.stats().states).toEqual({ starting: 0, busy: 4, idle: 2, draining: 0 });
      held.open();
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 4 }, () => through));
    } finally {
      await executor.dispose();
    }
  });

  it('keeps minWorkers from the first execution on', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 4, minWorkers: 3, spare: 0 } });
    try {
      await executor.execute({ code: 'async () => 1' });
      await waitFor(() => executor.stats().members.length === 3, 'three members');
      expect(executor.stats().states).toMatchObject({ idle: 3, busy: 0, starting: 0 });
    } finally {
      await executor.dispose();
    }
  });
});

describe('spawn limiting', () => {
  it('starts at most maxStarting processes at once, however many programs arrive', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 8, spare: 0, maxStarting: 2 } });
    try {
      const held = toolGate();
      const runs = Array.from({ length: 8 }, () => executor.execute(held.request));
      let most = 0;
      // The burst asked for eight processes at once; sampled until all eight programs run.
      while (held.waiting() < 8) {
        most = Math.max(most, executor.stats().starting);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect(most).toBe(2);
      expect(executor.stats().spawns).toBe(8);
      held.open();
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 8 }, () => through));
    } finally {
      await executor.dispose();
    }
  });
});

describe('slow starts', () => {
  it('starts a process for every waiting program at once when each start takes 400 ms, on default options', async () => {
    // 15 programs and the spare: within the default maxStarting of any host (16 a core, 16 at least).
    const executor = new IsolateExecutor(withStartDelay({}, 400));
    try {
      const held = toolGate();
      const runs = Array.from({ length: 15 }, () => executor.execute(held.request));
      let most = 0;
      while (held.waiting() < 15) {
        most = Math.max(most, executor.stats().starting);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      // In series (4 at a time, the former default on 2 cores), at most 4 would ever be starting.
      expect(most).toBe(16);
      held.open();
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 15 }, () => through));
    } finally {
      await executor.dispose();
    }
  });
});

describe('start times', () => {
  it("reports where its members' starts went, step by step, over every start that completed", async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0, recycleAfterRuns: 1 } });
    try {
      for (let i = 0; i < 3; i += 1) await executor.execute({ code: 'async () => 1' });
      const { starts, spawns } = executor.stats();
      expect(starts.count).toBe(spawns);
      expect(starts.count).toBeGreaterThanOrEqual(3);
      const steps = Object.values(starts.meanByStepMs);
      expect(Object.keys(starts.meanByStepMs)).toEqual(['directory', 'config', 'command', 'spawn', 'ready', 'connect']);
      for (const ms of steps) expect(ms).toBeGreaterThanOrEqual(0);
      // Waiting for workerd to listen, and connecting to it, take time on any host.
      expect(starts.meanByStepMs.ready).toBeGreaterThan(0);
      expect(starts.meanByStepMs.connect).toBeGreaterThan(0);
      expect(starts.meanMs).toBeCloseTo(
        steps.reduce((sum, ms) => sum + ms, 0),
        6,
      );
    } finally {
      await executor.dispose();
    }
  });
});

describe('reaping', () => {
  it('ends members idle for idleTimeoutMs, down to minWorkers, and serves again afterwards', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 4, minWorkers: 1, spare: 0, idleTimeoutMs: 300 } });
    try {
      const held = toolGate();
      const runs = Array.from({ length: 4 }, () => executor.execute(held.request));
      await waitFor(() => held.waiting() === 4, 'four programs to reach their tool');
      const pids = executor.stats().members.map((member) => member.pid);
      expect(pids).toHaveLength(4);
      held.open();
      await Promise.all(runs);
      await waitFor(() => executor.stats().members.length === 1, 'the idle members to be reaped');
      expect(executor.stats().ends).toEqual({ reaped: 3, recycled: 0, killed: 0, died: 0 });
      await waitFor(() => pids.filter((pid) => isAlive(pid)).length === 1, 'the reaped processes to end');
      await expect(executor.execute({ code: 'async () => "again"' })).resolves.toMatchObject({ result: 'again' });
    } finally {
      await executor.dispose();
    }
  });

  it('keeps the spare when minWorkers is 0, so an idle host holds nothing else', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 3, spare: 1, idleTimeoutMs: 200 } });
    try {
      const held = toolGate();
      const runs = Array.from({ length: 3 }, () => executor.execute(held.request));
      await waitFor(() => held.waiting() === 3, 'three programs to reach their tool');
      held.open();
      await Promise.all(runs);
      await waitFor(() => executor.stats().members.length === 1, 'the pool to shrink to its spare');
      expect(executor.stats().states).toMatchObject({ idle: 1, busy: 0 });
      expect(executor.stats().ends.reaped).toBe(3);
    } finally {
      await executor.dispose();
    }
  });

  it('does not reap a member that holds a retained execution', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 2, spare: 0, idleTimeoutMs: 100 } });
    try {
      const retained = await executor.execute({ code: 'async () => () => "kept"', retainHandles: true });
      const handle = (retained.result as { __codemode_handle__: string }).__codemode_handle__;
      await new Promise((resolve) => setTimeout(resolve, 600));
      await expect(executor.invokeHandle({ executionId: retained.executionId!, handle })).resolves.toMatchObject({
        result: 'kept',
      });
      expect(executor.stats().ends.reaped).toBe(0);
    } finally {
      await executor.dispose();
    }
  });
});

describe('the queue beyond maxWorkers', () => {
  it('takes programs waiting for a process still to start, and refuses past maxQueue with QUEUE_FULL', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 3, spare: 0, maxQueue: 1 } });
    try {
      const held = toolGate();
      // Three wait for processes that do not exist yet: they are not queued. The fourth is.
      const runs = Array.from({ length: 4 }, () => executor.execute(held.request));
      await expect(executor.execute({ code: 'async () => 1' })).rejects.toMatchObject({
        code: 'QUEUE_FULL',
        retryable: true,
        message: isolateText.queueFull(1),
      });
      await waitFor(() => held.waiting() === 3, 'three programs to reach their tool');
      held.open();
      expect(await Promise.all(runs)).toEqual(Array.from({ length: 4 }, () => through));
    } finally {
      await executor.dispose();
    }
  });
});

describe('stats', () => {
  it('reports draining members, and PSS when asked', async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 2, spare: 0, recycleAfterRuns: 1 } });
    try {
      // Worn after one run, but it holds a retained execution: it drains instead of ending.
      const retained = await executor.execute({ code: 'async () => () => 1', retainHandles: true });
      await waitFor(() => executor.stats().states.draining === 1, 'the worn member to drain');
      const [member] = executor.stats().members;
      expect(member).toMatchObject({ state: 'draining', draining: true, busy: false, retained: 1, pssMb: undefined });
      const [measured] = executor.stats({ pss: true }).members;
      if (process.platform === 'linux') expect(measured!.pssMb).toBeGreaterThan(1);
      await executor.closeHandles(retained.executionId!);
      await waitFor(() => executor.stats().states.draining === 0, 'the drained member to end');
      expect(executor.stats().ends.recycled).toBe(1);
    } finally {
      await executor.dispose();
    }
  });
});

describe('the default maxWorkers', () => {
  const GIB = 1024;

  it('no longer limits 1000 waiting programs on a 24 GiB machine: the memory budget does', () => {
    // Half of 24 GiB, at 9 MB a waiting member (measured), holds more than 1000 of them.
    expect(maxWorkersFor({ openFiles: 20_000 }, 12 * GIB)).toBeGreaterThanOrEqual(1000);
  });

  it('follows the budget and the open-file limit', () => {
    const host = { openFiles: undefined };
    const base = maxWorkersFor(host, 12 * GIB);
    expect(maxWorkersFor(host, 2 * GIB)).toBeLessThan(base);
    expect(maxWorkersFor({ openFiles: 1024 }, 12 * GIB)).toBeLessThan(base);
    // Never none: a small budget still runs one program at a time.
    expect(maxWorkersFor({ openFiles: 1024 }, 4)).toBe(1);
  });

  it('is what an executor without pool.maxWorkers uses', async () => {
    const executor = new IsolateExecutor();
    try {
      expect(executor.stats().maxWorkers).toBe(defaultMaxWorkers());
    } finally {
      await executor.dispose();
    }
  });
});
