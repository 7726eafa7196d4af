/**
 * Tool calls in flight (docs/isolate.md, "Tool calls in flight"), on the real workerd: a flood of
 * 10,000 and of 100,000 calls keeps the calls on the host and the member's memory bounded, and
 * calls that wait on a later call (a latch) still all finish, as on upstream. The floods are
 * bounded in time by their run's timeout; their figures are printed, not asserted.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, DEFAULT_POOL } from '../../../../src/isolate/host/options/table.js';
import { IsolateExecutor } from '../../../../src/isolate/index.js';
import { ExecutionTimeoutError } from '../../../../src/protocol/errors.js';
import { withSlack } from '../../../support/machine-slack.js';

const WINDOW = DEFAULT_LIMITS.maxConcurrentToolCalls;
const providers = [{ name: 'api', tools: ['send', 'wait', 'open'] }];
let executor: IsolateExecutor;

beforeAll(() => {
  executor = new IsolateExecutor({ pool: { maxWorkers: 1, spare: 0 } });
});

afterAll(async () => {
  await executor.dispose();
});

function residentMb(pid: number | 'self'): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

interface Peaks {
  hostGrowthMb: number;
  memberMb: number;
}

/** Samples the host's and the member's resident sets every 20 ms while `work` runs. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; peaks: Peaks }> {
  const hostBefore = residentMb('self');
  const peaks: Peaks = { hostGrowthMb: 0, memberMb: 0 };
  const sample = setInterval(() => {
    peaks.hostGrowthMb = Math.max(peaks.hostGrowthMb, residentMb('self') - hostBefore);
    for (const member of executor.stats().members) peaks.memberMb = Math.max(peaks.memberMb, residentMb(member.pid));
  }, 20);
  try {
    return { value: await work(), peaks };
  } finally {
    clearInterval(sample);
  }
}

/** A dispatch that answers every call at once, counting the calls the host holds at a time. */
function promptHost() {
  const seen = { received: 0, inFlight: 0, maxInFlight: 0 };
  const dispatch = async () => {
    seen.received += 1;
    seen.inFlight += 1;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    seen.inFlight -= 1;
    return '{"result":1}';
  };
  return { seen, dispatch };
}

const flood = (calls: number) =>
  `async () => (await Promise.all(Array.from({ length: ${calls} }, (_, i) => api.send(i)))).length`;

describe('a flood of tool calls answered at once', () => {
  // The executor's maxTimeout (300 s) bounds it: about 30 s on a loaded 2-core machine.
  it('of 10,000 completes, the host holding a window of them and the member the rest', async () => {
    const { seen, dispatch } = promptHost();
    const { value: outcome, peaks } = await measured(() =>
      executor.execute({ code: flood(10_000), providers, dispatch, timeout: null }),
    );
    console.log(`10,000 calls: ${JSON.stringify({ ...seen, ...peaks })}`);
    expect(outcome).toEqual({ result: 10_000, logs: [] });
    expect(seen.received).toBe(10_000);
    // A stall on a loaded machine may open the window a step or two; all at once would be 10,000.
    expect(seen.maxInFlight).toBeLessThan(4 * WINDOW);
    // Measured: about 120 MB with the window, 312 MB with every call in flight at once.
    expect(peaks.memberMb).toBeLessThan(220);
  });

  it('of 100,000 keeps the host and the member bounded until its run ends', async () => {
    const { seen, dispatch } = promptHost();
    // 100,000 calls take minutes on a loaded machine: the run's bound ends it, done or not.
    const timeout = withSlack(5_000);
    const { value: outcome, peaks } = await measured(() =>
      executor.execute({ code: flood(100_000), providers, dispatch, timeout, countHostWaits: true }),
    );
    console.log(`100,000 calls: ${JSON.stringify({ ...seen, ...peaks })}`);
    const completed = outcome.result === 100_000;
    if (!completed) expect(outcome.error).toBe(ExecutionTimeoutError.format(timeout));
    expect(seen.maxInFlight).toBeLessThan(4 * WINDOW);
    // Every call at once would be some 2.6 GB of RPCs: the member would end over its cap.
    expect(peaks.memberMb).toBeLessThan(DEFAULT_POOL.memoryLimitMb);
    expect(peaks.hostGrowthMb).toBeLessThan(100);
  });
});

describe('tool calls that wait on a later call', () => {
  it('finish: 300 calls waiting on a latch, then the call that opens it', async () => {
    let open: () => void = () => {};
    const latch = new Promise<void>((resolve) => {
      open = resolve;
    });
    let waiting = 0;
    let released = 0;
    const dispatch = async (_provider: string, tool: string) => {
      if (tool === 'open') {
        released = waiting;
        open();
        return '{"result":"opened"}';
      }
      waiting += 1;
      await latch;
      return '{"result":true}';
    };
    const outcome = await executor.execute({
      code: `async () => {
        const waits = Array.from({ length: 300 }, () => api.wait());
        await api.open();
        return (await Promise.all(waits)).length;
      }`,
      providers,
      dispatch,
      timeout: withSlack(20_000),
    });
    expect(outcome).toEqual({ result: 300, logs: [] });
    expect(released).toBe(300);
  });
});
