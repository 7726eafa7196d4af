/**
 * The clocks of how a run ends (src/isolate/host/run/run-clocks.ts), without workerd: a fake process
 * whose CPU time the test sets, and which records what the host sends it. Every bound is tens of
 * milliseconds, and every wait is bounded. What the run does with what they report is the table's
 * (run-ending.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CancelMessage } from '../../../../src/isolate/contract/messages.js';
import { type RunBounds, RunClocks } from '../../../../src/isolate/host/run/run-clocks.js';

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

const ends: RunClocks[] = [];
const processes: FakeProcess[] = [];

afterEach(() => {
  for (const end of ends.splice(0)) end.stop();
  for (const sandbox of processes.splice(0)) sandbox.rest();
});

function runEnd(bounds: Partial<RunBounds>) {
  const sandbox = new FakeProcess();
  processes.push(sandbox);
  const events = { expired: [] as string[], spinning: 0 };
  const end = new RunClocks(
    sandbox,
    'r1',
    { timeout: 30, cpuTimeout: null, countHostWaits: false, turnGraceMs: 3_000, ...bounds },
    { expired: (bound) => events.expired.push(bound), spinning: () => events.spinning++ },
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

describe('RunClocks', () => {
  it("reports its wall-clock bound spent, and sends nothing of its own: giving up is the run's verdict", async () => {
    const { sandbox, events, end } = runEnd({ timeout: 30 });
    end.start();
    await until(() => events.expired.length > 0, 2_000);
    expect(events.expired).toEqual(['timeout']);
    expect(sandbox.sent).toEqual([]);
    end.giveUp(true);
    expect(sandbox.sent).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: true }]);
  });

  it('reports its CPU bound spent', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000, cpuTimeout: 40 });
    end.start();
    sandbox.spin();
    await until(() => events.expired.length > 0, 2_000);
    expect(events.expired).toEqual(['cpu']);
  });

  it('gives up with the cancel the verdict asks for, and stops its clocks: no bound is reported after', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 20 });
    end.start();
    end.giveUp(false);
    expect(sandbox.sent).toEqual([{ t: 'cancel', run: 'r1', raceMayWin: false }]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(events.expired).toEqual([]);
  });

  it('reports a process that spins through its grace, and only after the grace', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    end.start();
    sandbox.spin();
    end.giveUp(false);
    expect(events.spinning).toBe(0);
    await until(() => events.spinning > 0, 2_000);
    expect(events.spinning).toBe(1);
  });

  it('gives the turn in flight at the wall-clock bound turnGraceMs of CPU to finish, and reports it spinning past that', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000, turnGraceMs: 600 });
    end.start();
    sandbox.spin();
    end.giveUp(true);
    // Past the 200 ms that mark a spin elsewhere, inside this grace.
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(events.spinning).toBe(0);
    await until(() => events.spinning > 0, 5_000);
    expect(sandbox.cpu).toBeGreaterThanOrEqual(600);
  });

  it('gives no turn grace past the CPU bound or to a caller that went away: 200 ms of CPU is a spin', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000, turnGraceMs: 5_000 });
    end.start();
    sandbox.spin();
    end.giveUp(false);
    await until(() => events.spinning > 0, 2_000);
    expect(sandbox.cpu).toBeLessThan(1_000);
  });

  it('gives a process that burns no CPU more grace, up to the cap, before reporting it', async () => {
    const { events, end } = runEnd({ timeout: 60_000 });
    end.start();
    const since = performance.now();
    end.giveUp(false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events.spinning).toBe(0);
    await until(() => events.spinning > 0, 10_000);
    expect(performance.now() - since).toBeGreaterThanOrEqual(2_000);
  });

  it('keeps a process that answers nothing but makes slow progress (a loaded host) past the stuck limit', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    end.start();
    end.giveUp(false);
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
    end.giveUp(false);
    await until(() => events.spinning > 0, 500);
  });

  it('stops every clock: a stopped run is never given up', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 20 });
    end.start();
    end.stop();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(sandbox.sent).toEqual([]);
    expect(events.expired).toEqual([]);
  });

  it('stops the grace watch: a stopped run is never reported spinning', async () => {
    const { sandbox, events, end } = runEnd({ timeout: 60_000 });
    sandbox.cpu = undefined;
    end.start();
    end.giveUp(false);
    end.stop();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(events.spinning).toBe(0);
  });
});
