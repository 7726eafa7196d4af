/**
 * The drain as a class of its own (src/server/calls/drain.ts), on fake timers: it counts the
 * executions in flight, waits for them up to the drain timeout, then gives them up with the texts
 * the daemon's drain has always used, and bounds every later wait by the grace. The daemon's own
 * drain over real sockets is test/server/lifecycle.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Drain } from '../../../src/server/calls/drain.js';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** A drain whose log lines are kept, with their levels. */
function drainLogging(timeoutMs: number) {
  const lines: [string, string | undefined][] = [];
  const drain = new Drain(timeoutMs, (message, level) => void lines.push([message, level]));
  return { drain, lines };
}

/** Whether `promise` has settled by now, without waiting for it. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await vi.advanceTimersByTimeAsync(0);
  return settled;
}

describe('the drain', () => {
  it('counts each execution once, however often its end is called', () => {
    const { drain } = drainLogging(1_000);
    const first = drain.track();
    drain.track();
    expect(drain.running).toBe(2);
    first();
    first();
    expect(drain.running).toBe(1);
  });

  it('is draining from begin() on, and settles at once with nothing in flight', async () => {
    const { drain, lines } = drainLogging(1_000);
    expect(drain.draining).toBe(false);
    drain.begin();
    expect(drain.draining).toBe(true);
    expect(await settledYet(drain.settle(() => expect.unreachable()))).toBe(true);
    expect(lines).toEqual([]);
  });

  it('waits for the last execution in flight, within the timeout, and gives none up', async () => {
    const { drain, lines } = drainLogging(1_000);
    const end = drain.track();
    const giveUp = vi.fn();
    drain.begin();
    const settled = drain.settle(giveUp);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settledYet(settled)).toBe(false);
    end();
    expect(await settledYet(settled)).toBe(true);
    expect(giveUp).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('past the timeout, logs why, gives every call up with the text for its caller, and waits the grace at most', async () => {
    const { drain, lines } = drainLogging(300);
    drain.track();
    drain.track();
    const giveUp = vi.fn();
    drain.begin();
    const settled = drain.settle(giveUp);
    await vi.advanceTimersByTimeAsync(300);
    expect(lines).toEqual([
      [
        'the drain timeout of 300 ms passed (--drain-timeout-ms) with 2 executions still running: cancelling them',
        'warn',
      ],
    ]);
    expect(giveUp).toHaveBeenCalledTimes(1);
    const [why, toClient] = giveUp.mock.calls[0] as [string, (kind: string) => string];
    expect(why).toBe(lines[0]?.[0]);
    expect(toClient('execute')).toBe(
      "The daemon stopped, and this execute call's run was cancelled after the daemon's drain timeout of 300 ms passed (--drain-timeout-ms).",
    );
    // The executions ignore their signal: the stop goes on after the grace (5 s), not never.
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await settledYet(settled)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settledYet(settled)).toBe(true);
    // And a later wait (a session's last answers) is bounded by the same grace.
    expect(await settledYet(drain.within(new Promise<void>(() => {})))).toBe(true);
  });

  it('bounds no wait before the timeout has passed', async () => {
    const { drain } = drainLogging(300);
    const never = drain.within(new Promise<void>(() => {}));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await settledYet(never)).toBe(false);
  });
});
