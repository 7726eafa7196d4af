/**
 * The host's half of how a run ends (src/isolate/host/run/run-end.ts), without workerd: a fake process
 * whose CPU time the test sets, and which records what the host sends it. Every bound is tens of
 * milliseconds, and every wait is bounded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CancelMessage, DoneMessage } from '../../../../src/isolate/contract/messages.js';
import { type RunBounds, RunEnd } from '../../../../src/isolate/host/run/run-end.js';
import { ExecutionTimeoutError } from '../../../../src/protocol/errors.js';
import { formatCpuTimeout } from '../../../../src/protocol/texts.js';

class FakeProcess {
  cpu: number | undefined = 0;
  readonly sent: CancelMessage[] = [];
  #spin: NodeJS.Timeout | undefined;

  cpuMs(): number | undefined {
    return this.cpu;
  }

  send(message: CancelMessage): void {
    this.sent.push(message);
  }

  /** Burns CPU as fast as the wall clock runs, until `rest`. */
  spin(): void {
    const started = performance.now();
    const base = this.cpu ?? 0;
    this.#spin = setInterval(() => {
      this.cpu = base + (performance.now() - started);
    }, 5);
  }

  rest(): void {
    clearInterval(this.#spin);
  }
}

const ends: RunEnd[] = [];
const processes: FakeProcess[] = [];

afterEach(() => {
  for (const end of ends.splice(0)) end.stop();
  for (const sandbox of processes.splice(0)) sandbox.rest();
});

function done(settledBeforeDeadline: boolean): DoneMessage {
  return { t: 'done', run: 'r1', outcome: 'value', value: 1, logs: [], settledBeforeDeadline };
}

function runEnd(bounds: Partial<RunBounds>) {
  const sandbox = new FakeProcess();
  processes.push(sandbox);
  const events = { givingUp: 0, spinning: 0 };
  const end = new RunEnd(
    sandbox,
    'r1',
    { timeout: 30, cpuTimeout: null, countHostWaits: false, ...bounds },
    { givingUp: () => events.givingUp++, spinning: () => events.spinning++ },
  );
  ends.push(end);
  return { sandbox, events, end };
}

async function until(condition: () => boolean, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('RunEnd', () => {
  it('gives a run up at its wall-clock bound where the race may still be won, and a done settled before the deadline still stands', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 30 });
    end.start();
    expect(end.doneIsLate(done(false))).toBe(false);
    await until(() => sandbox.sent.length > 0, 2_000);
    expect(sandbox.sent).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: true }]);
    expect(events.givingUp).toBe(1);
    expect(end.doneIsLate(done(true))).toBe(false);
    expect(end.doneIsLate(done(false))).toBe(true);
    expect(end.timeoutText()).toBe(ExecutionTimeoutError.format(30));
  });

  it('gives a run up past its CPU bound where no race can be won, and no done wins over it', async () => {
    const { sandbox, end } = runEnd({ timeout: 60_000, cpuTimeout: 40 });
    end.start();
    sandbox.spin();
    await until(() => sandbox.sent.length > 0, 2_000);
    expect(sandbox.sent).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: false }]);
    expect(end.doneIsLate(done(true))).toBe(true);
    expect(end.timeoutText()).toBe(formatCpuTimeout(40));
  });

  it('gives up at once a run its caller abandoned, and no done wins over it', () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    end.start();
    end.abandon();
    expect(sandbox.sent).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: false }]);
    expect(events.givingUp).toBe(1);
    expect(end.doneIsLate(done(true))).toBe(true);
    end.abandon();
    expect(sandbox.sent).toHaveLength(1);
  });

  it('reports a process that spins through its grace, and only after the grace', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    end.start();
    sandbox.spin();
    end.abandon();
    expect(events.spinning).toBe(0);
    await until(() => events.spinning > 0, 2_000);
    expect(events.spinning).toBe(1);
  });

  it('gives a process that burns no CPU more grace, up to the cap, before reporting it', async () => {
    const { events, end } = runEnd({ timeout: 60_000 });
    end.start();
    const since = performance.now();
    end.abandon();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events.spinning).toBe(0);
    await until(() => events.spinning > 0, 10_000);
    expect(performance.now() - since).toBeGreaterThanOrEqual(2_000);
  });

  it('keeps a process that answers nothing but makes slow progress (a loaded host) past the stuck limit', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    end.start();
    end.abandon();
    // 4 ms of CPU every 100 ms (a process loading its worker on a crowded core): 112 ms by the end,
    // short of a spin's 200 ms, and past 2 s without a reply.
    const creep = setInterval(() => (sandbox.cpu = (sandbox.cpu ?? 0) + 4), 100);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_800));
      expect(events.spinning).toBe(0);
    } finally {
      clearInterval(creep);
    }
  });

  it('reports a spin at the first grace period where the CPU time cannot be read', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    sandbox.cpu = undefined;
    end.start();
    end.abandon();
    await until(() => events.spinning > 0, 500);
  });

  it('stops every clock: a stopped run is never given up', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 20 });
    end.start();
    end.stop();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(sandbox.sent).toEqual([]);
    expect(events.givingUp).toBe(0);
    expect(end.doneIsLate(done(false))).toBe(false);
  });
});
