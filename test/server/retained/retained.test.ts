/**
 * Retained executions on a real daemon (issue 22, finding 3): a cap per connection, and an idle
 * time-to-live that closes them whether or not their connection is still open, so a client that
 * retains and goes away leaves nothing held past it.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { IsolateExecutor } from '../../../src/isolate/index.js';
import { ExecutorError, HANDLE_KEY } from '../../../src/protocol/index.js';
import { connect } from '../../../src/remote/index.js';
import { createExecutorServer } from '../../../src/server/index.js';
import { NodeWebSocket, rejection } from '../../support/client.js';
import { metricValue, startAdminDaemon, stopAllDaemons, waitUntil } from '../../support/daemon.js';

afterAll(stopAllDaemons);

const RETAIN = { code: 'async () => ({ next: async () => 1 })', retainHandles: true } as const;

describe('--max-retained-per-connection', () => {
  it('refuses one retained execution more on the connection, naming the cap; a closed one frees its place', async () => {
    const daemon = await startAdminDaemon(['--max-workers', '3', '--max-retained-per-connection', '2']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const neighbour = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      const first = await executor.execute(RETAIN);
      const second = await executor.execute(RETAIN);
      expect(first.executionId).toBeDefined();
      expect(second.executionId).toBeDefined();
      const error = await rejection(executor.execute(RETAIN));
      expect(error).toBeInstanceOf(ExecutorError);
      expect(error.code).toBe('LIMIT_EXCEEDED');
      expect(error.message).toBe(
        "This connection already holds 2 retained executions, the executor daemon's per-connection limit (--max-retained-per-connection): close one with closeHandles first",
      );
      // A run that retains nothing is not counted, and another connection has places of its own.
      await expect(executor.execute({ code: 'async () => 7' })).resolves.toMatchObject({ result: 7 });
      const elsewhere = await neighbour.execute(RETAIN);
      expect(elsewhere.executionId).toBeDefined();
      await neighbour.closeHandles(elsewhere.executionId!);
      expect(await metricValue(daemon, 'codemode_executor_retained_held{connection="open"}')).toBe(2);
      await executor.closeHandles(first.executionId!);
      const third = await executor.execute(RETAIN);
      expect(third.executionId).toBeDefined();
      await executor.closeHandles(second.executionId!);
      await executor.closeHandles(third.executionId!);
    } finally {
      await executor.dispose();
      await neighbour.dispose();
    }
  });
});

describe('--retained-idle-timeout-ms', () => {
  it("closes a gone client's retained executions once unused that long; until then another connection may call them", async () => {
    const daemon = await startAdminDaemon(['--max-workers', '3', '--retained-idle-timeout-ms', '3000']);
    const executor = await connect(daemon.url, { websocket: NodeWebSocket });
    const first = await executor.execute(RETAIN);
    const second = await executor.execute(RETAIN);
    await executor.dispose();
    await daemon.waitForLine(/^connection 1 closed after/);
    expect(await metricValue(daemon, 'codemode_executor_retained_held{connection="gone"}')).toBe(2);
    expect(await metricValue(daemon, 'codemode_executor_retained_executions')).toBe(2);

    // Used from another connection, the first stays open past the time the second is closed at.
    const later = await connect(daemon.url, { websocket: NodeWebSocket });
    try {
      const handle = (first.result as { next: Record<string, string> }).next[HANDLE_KEY]!;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await expect(later.invokeHandle({ executionId: first.executionId!, handle, args: [] })).resolves.toMatchObject({
        result: 1,
      });
      const closed = await daemon.waitForLine(/^retained execution \S+ closed: /);
      expect(closed).toBe(
        `retained execution ${second.executionId!.split('@')[0]} closed: unused for 3000 ms (--retained-idle-timeout-ms)`,
      );
      expect(await metricValue(daemon, 'codemode_executor_retained_executions')).toBe(1);
      // Bounded wait: the first goes too, 3 s after its last use.
      const deadline = Date.now() + 15_000;
      await waitUntil(
        () =>
          Date.now() > deadline ||
          daemon.lines.filter((line) => /^retained execution \S+ closed: /.test(line)).length === 2,
      );
      expect(await metricValue(daemon, 'codemode_executor_retained_executions')).toBe(0);
      expect(await metricValue(daemon, 'codemode_executor_retained_held{connection="gone"}')).toBe(0);
      expect(await metricValue(daemon, 'codemode_executor_retained_idle_closed_total')).toBe(2);
      const error = await rejection(later.invokeHandle({ executionId: first.executionId!, handle, args: [] }));
      expect(error.code).toBe('HANDLE_NOT_FOUND');
    } finally {
      await later.dispose();
    }
  });
});

describe("the executor's own closes", () => {
  it("drop the daemon's record of a retained execution the executor closed at its idle time-to-live", async () => {
    const executor = new IsolateExecutor({ pool: { maxWorkers: 2, retainedIdleTimeoutMs: 500 } });
    const lines: string[] = [];
    // The daemon's own time-to-live is far away, so only the executor's close can drop the record.
    const server = await createExecutorServer({
      executor,
      port: 0,
      retainedIdleTimeoutMs: 600_000,
      log: (line) => void lines.push(line),
    });
    const client = await connect(server.url, { websocket: NodeWebSocket });
    try {
      const kept = await client.execute(RETAIN);
      expect(kept.executionId).toBeDefined();
      expect(server.retained).toEqual({ open: 1, gone: 0 });
      const deadline = Date.now() + 10_000;
      await waitUntil(() => Date.now() > deadline || server.retained.open === 0);
      expect(server.retained).toEqual({ open: 0, gone: 0 });
      // Its place on the connection is free again, and the record's absence is no error to a later call.
      const error = await rejection(
        client.invokeHandle({
          executionId: kept.executionId!,
          handle: (kept.result as { next: Record<string, string> }).next[HANDLE_KEY]!,
          args: [],
        }),
      );
      expect(error.code).toBe('HANDLE_NOT_FOUND');
    } finally {
      await client.dispose();
      await server.close();
      await executor.dispose();
    }
  });
});

describe('one owner of a retained execution', () => {
  /** The idle timers armed and not yet cleared or fired, with one of the two idle bounds as their delay. */
  function watchTimers(delays: number[]) {
    const armed = new Set<unknown>();
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
      callback: (...args: unknown[]) => void,
      delay?: number,
      ...args: unknown[]
    ) => {
      const timer = realSet(() => {
        armed.delete(timer);
        callback(...args);
      }, delay);
      if (delay !== undefined && delays.includes(delay)) armed.add(timer);
      return timer;
    }) as typeof setTimeout);
    const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation((timer) => {
      armed.delete(timer);
      realClear(timer);
    });
    return {
      armed,
      restore: () => {
        set.mockRestore();
        clear.mockRestore();
      },
    };
  }

  it("arms one idle timer for an execution a daemon's call retained: the executor's, at the daemon's bound", async () => {
    const daemonIdleMs = 43_210;
    const poolIdleMs = 654_321;
    const timers = watchTimers([daemonIdleMs, poolIdleMs]);
    const executor = new IsolateExecutor({ pool: { maxWorkers: 2, retainedIdleTimeoutMs: poolIdleMs } });
    const server = await createExecutorServer({
      executor,
      port: 0,
      retainedIdleTimeoutMs: daemonIdleMs,
      log: () => {},
    });
    const client = await connect(server.url, { websocket: NodeWebSocket });
    try {
      const kept = await client.execute(RETAIN);
      expect(server.retained).toEqual({ open: 1, gone: 0 });
      expect(timers.armed.size).toBe(1);
      // A handle call stops it and arms it again once over: still one.
      const handle = (kept.result as { next: Record<string, string> }).next[HANDLE_KEY]!;
      await expect(client.invokeHandle({ executionId: kept.executionId!, handle, args: [] })).resolves.toMatchObject({
        result: 1,
      });
      expect(timers.armed.size).toBe(1);
      await client.closeHandles(kept.executionId!);
      expect(timers.armed.size).toBe(0);
    } finally {
      timers.restore();
      await client.dispose();
      await server.close();
      await executor.dispose();
    }
  });
});
