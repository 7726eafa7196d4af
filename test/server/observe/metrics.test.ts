/**
 * The metrics object on its own: the process's default metrics are served once per process, and
 * a closed server stops listening to an executor that outlives it.
 */
import { describe, expect, it } from 'vitest';
import type { RunObserver } from '../../../src/isolate/index.js';
import type { Executor } from '../../../src/protocol/index.js';
import { DaemonMetrics } from '../../../src/server/observe/metrics.js';

function reportingExecutor() {
  const observers = new Set<RunObserver>();
  const executor: Executor & { observeRuns(observer: RunObserver): () => void } = {
    execute: async () => ({ logs: [] }),
    invokeHandle: async () => ({ logs: [] }),
    closeHandles: async () => {},
    dispose: async () => {},
    observeRuns(observer) {
      observers.add(observer);
      return () => observers.delete(observer);
    },
  };
  return { executor, observers };
}

describe('DaemonMetrics', () => {
  it("serves the Node process's own metrics beside the daemon's, in every server's exposition", async () => {
    for (const metrics of [
      new DaemonMetrics(reportingExecutor().executor),
      new DaemonMetrics(reportingExecutor().executor),
    ]) {
      const { body } = await metrics.exposition();
      expect(body).toMatch(/^codemode_executor_process_cpu_seconds_total \d/m);
      expect(body).toMatch(/^# TYPE codemode_executor_executions_total counter$/m);
      metrics.close();
    }
  });

  it('stops observing the executor when closed', () => {
    const { executor, observers } = reportingExecutor();
    const metrics = new DaemonMetrics(executor);
    expect(observers.size).toBe(1);
    metrics.close();
    expect(observers.size).toBe(0);
  });
});
