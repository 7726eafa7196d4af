/**
 * The pool's policy on its own: fake processes from a fake launch, and a clock the test advances.
 * No workerd, no timers; each test runs in milliseconds. The real-workerd behaviour is in
 * pool.test.ts, pool-elastic.test.ts, pool-fairness.test.ts and nested-runs.test.ts; the memory
 * budget's own tests are in memory-budget.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { isolateText } from '../../../../src/isolate/host/texts.js';
import { ExecutorError } from '../../../../src/protocol/errors.js';
import { poolWith, settle, track } from '../../../support/pool-fakes.js';

describe('growth and spares', () => {
  it('starts nothing before the first acquire', async () => {
    const { launcher } = poolWith({ minWorkers: 2 });
    await settle();
    expect(launcher.starting()).toBe(0);
  });

  it('grows to the busy runs plus the spare, at most maxStarting at once', async () => {
    const { pool, launcher } = poolWith({ maxStarting: 2, spare: 1 });
    const runs = [track(pool.acquire()), track(pool.acquire()), track(pool.acquire())];
    // Three waiters and a spare want four processes; two may start at once.
    expect(launcher.starting()).toBe(2);
    await launcher.startAll();
    expect(runs.filter((run) => run.settled)).toHaveLength(2);
    expect(launcher.starting()).toBe(2);
    await launcher.startAll();
    expect(runs.every((run) => run.settled)).toBe(true);
    // Three busy and one spare: nothing more to start.
    expect(launcher.starting()).toBe(0);
    expect(pool.stats().states).toEqual({ starting: 0, idle: 1, busy: 3, draining: 0 });
    expect(pool.stats().spawns).toBe(4);
  });

  it('never grows beyond maxWorkers plus the spare; the rest wait in the queue', async () => {
    const { pool, launcher } = poolWith({ maxWorkers: 2, spare: 1, maxStarting: 8 });
    const runs = Array.from({ length: 5 }, () => track(pool.acquire()));
    expect(launcher.starting()).toBe(3);
    await launcher.startAll();
    expect(runs.filter((run) => run.settled)).toHaveLength(2);
    expect(launcher.starting()).toBe(0);
    expect(pool.stats().queued).toBe(3);
  });

  it('keeps minWorkers once started, and serves the next run from an idle member without a spawn', async () => {
    const { pool, launcher } = poolWith({ minWorkers: 3, spare: 0, maxStarting: 8 });
    const first = track(pool.acquire());
    expect(launcher.starting()).toBe(3);
    await launcher.startAll();
    pool.release(first.value!, 'keep');
    const second = track(pool.acquire());
    await settle();
    expect(second.value).toBe(first.value);
    expect(launcher.starting()).toBe(0);
    expect(pool.stats().spawns).toBe(3);
  });

  it('replaces a killed member, and counts why each member ended', async () => {
    const { pool, launcher } = poolWith({ spare: 1 });
    const run = track(pool.acquire());
    await launcher.startAll();
    const process = run.value!;
    pool.release(process, 'kill');
    await settle();
    expect(process.killed).toBe(true);
    expect(pool.stats().ends).toEqual({ reaped: 0, recycled: 0, killed: 1, died: 0 });
    const idle = launcher.started.find((other) => other !== process)!;
    idle.die();
    await settle();
    expect(pool.stats().ends.died).toBe(1);
    // The spare is covered again.
    expect(launcher.starting()).toBe(1);
  });

  it('recycles a member after recycleAfterRuns runs, or past maxRssMb', async () => {
    const { pool, launcher } = poolWith({ recycleAfterRuns: 2, spare: 0 });
    const first = track(pool.acquire());
    await launcher.startAll();
    const process = first.value!;
    pool.release(process, 'keep');
    const second = track(pool.acquire());
    await settle();
    expect(second.value).toBe(process);
    pool.release(process, 'keep');
    await settle();
    expect(process.killed).toBe(true);
    expect(pool.stats().ends.recycled).toBe(1);

    const third = track(pool.acquire());
    await launcher.startAll();
    third.value!.rss = 513;
    pool.release(third.value!, 'keep');
    await settle();
    expect(third.value!.killed).toBe(true);
    expect(pool.stats().ends.recycled).toBe(2);
  });

  it('fails the waiters when a launch fails and nothing else can serve them', async () => {
    const { pool, launcher } = poolWith({ spare: 0 });
    const run = track(pool.acquire());
    const failure = new ExecutorError('SANDBOX_UNAVAILABLE', 'no binary');
    await launcher.failAll(failure);
    expect(run.error).toBe(failure);
    expect(pool.stats().queued).toBe(0);
  });
});

describe('reaping', () => {
  it('ends a member idle for idleTimeoutMs beyond the spares, and not before', async () => {
    const { pool, launcher, clock } = poolWith({ spare: 1, maxStarting: 4 });
    const runs = [track(pool.acquire()), track(pool.acquire())];
    await launcher.startAll();
    for (const run of runs) pool.release(run.value!, 'keep');
    await settle();
    // Three idle, none busy: the floor is one spare.
    expect(pool.stats().states.idle).toBe(3);
    clock.advance(999);
    expect(pool.stats().states.idle).toBe(3);
    clock.advance(1);
    await settle();
    expect(pool.stats().states.idle).toBe(1);
    expect(pool.stats().ends.reaped).toBe(2);
    // At the floor, no reaping timer is left: only the memory budget's reading, while a member lives.
    expect(clock.pending).toBe(1);
  });

  it('never reaps below minWorkers', async () => {
    const { pool, launcher, clock } = poolWith({ minWorkers: 2, spare: 0, maxStarting: 4 });
    const run = track(pool.acquire());
    await launcher.startAll();
    pool.release(run.value!, 'keep');
    clock.advance(10_000);
    await settle();
    expect(pool.stats().states.idle).toBe(2);
    expect(pool.stats().ends.reaped).toBe(0);
  });

  it('stops its timers on dispose', async () => {
    const { pool, launcher, clock } = poolWith({ spare: 0 });
    const run = track(pool.acquire());
    await launcher.startAll();
    pool.release(run.value!, 'keep');
    // The reaping timer and the memory budget's reading.
    expect(clock.pending).toBe(2);
    await pool.dispose();
    expect(clock.pending).toBe(0);
    expect(run.value!.killed).toBe(true);
  });
});

describe('the queue and its cancel', () => {
  it('refuses a waiter beyond maxQueue with QUEUE_FULL, and serves the queue in order', async () => {
    const { pool, launcher } = poolWith({ maxWorkers: 1, maxQueue: 2, spare: 0 });
    const first = track(pool.acquire());
    await launcher.startAll();
    const waiting = [track(pool.acquire()), track(pool.acquire())];
    const refused = track(pool.acquire());
    await settle();
    expect(refused.error).toBeInstanceOf(ExecutorError);
    expect((refused.error as ExecutorError).code).toBe('QUEUE_FULL');
    expect((refused.error as ExecutorError).message).toBe(isolateText.queueFull(2));
    expect(waiting.some((run) => run.settled)).toBe(false);
    pool.release(first.value!, 'keep');
    await settle();
    expect(waiting[0]!.value).toBe(first.value);
    expect(waiting[1]!.settled).toBe(false);
  });

  it("takes a waiter out of the queue when its signal aborts, rejecting it with the signal's reason", async () => {
    const { pool, launcher } = poolWith({ maxWorkers: 1, spare: 0 });
    const first = track(pool.acquire());
    await launcher.startAll();
    const controller = new AbortController();
    const cancelled = new ExecutorError('EXECUTION_CANCELLED', 'cancelled by the test');
    const waiting = track(pool.acquire(undefined, controller.signal));
    const after = track(pool.acquire());
    expect(pool.stats().queued).toBe(2);
    controller.abort(cancelled);
    // Out of the queue at once, not on a later turn.
    expect(pool.stats().queued).toBe(1);
    await settle();
    expect(waiting.error).toBe(cancelled);
    expect(pool.stats().queued).toBe(1);
    // The slot goes to the waiter behind it.
    pool.release(first.value!, 'keep');
    await settle();
    expect(after.value).toBe(first.value);
  });

  it("refuses at once a waiter whose signal has already aborted, with the signal's reason", async () => {
    const { pool, launcher } = poolWith();
    const controller = new AbortController();
    const cancelled = new ExecutorError('EXECUTION_CANCELLED', 'cancelled before');
    controller.abort(cancelled);
    const run = track(pool.acquire(undefined, controller.signal));
    await settle();
    expect(run.error).toBe(cancelled);
    expect(launcher.starting()).toBe(0);
  });

  it('rejects what waits with EXECUTOR_DISPOSED on dispose, and every later acquire', async () => {
    const { pool, launcher } = poolWith({ maxWorkers: 1, spare: 0 });
    const first = track(pool.acquire());
    await launcher.startAll();
    const waiting = track(pool.acquire());
    await pool.dispose();
    expect((waiting.error as ExecutorError).code).toBe('EXECUTOR_DISPOSED');
    expect(first.value!.killed).toBe(true);
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'EXECUTOR_DISPOSED' });
  });
});

describe('members that hold retained executions', () => {
  it('drains such a member: no new execution, its invocations only, and it ends once the last is closed', async () => {
    const { pool, launcher, retained } = poolWith({ spare: 0 });
    const run = track(pool.acquire());
    await launcher.startAll();
    const holder = run.value!;
    retained.set(holder, 1);
    pool.release(holder, 'keep');
    await settle();
    expect(pool.stats().states).toEqual({ starting: 0, idle: 0, busy: 0, draining: 1 });
    expect(pool.stats().members[0]!.retained).toBe(1);

    // A new execution gets a new process.
    const next = track(pool.acquire());
    expect(launcher.starting()).toBe(1);
    await launcher.startAll();
    expect(next.value).not.toBe(holder);

    // An invocation of the retained execution gets the holder, beside the busy execution.
    const lost = () => new ExecutorError('HANDLE_NOT_FOUND', 'lost');
    const invocation = track(pool.acquire({ process: holder, lost }));
    await settle();
    expect(invocation.value).toBe(holder);
    pool.release(holder, 'keep');
    expect(holder.killed).toBe(false);

    retained.delete(holder);
    pool.retainedClosed(holder);
    await settle();
    expect(holder.killed).toBe(true);
    expect(pool.stats().ends.recycled).toBe(1);
  });

  it('never reaps a member that holds a retained execution', async () => {
    const { pool, launcher, clock, retained } = poolWith({ spare: 0 });
    const run = track(pool.acquire());
    await launcher.startAll();
    retained.set(run.value!, 1);
    pool.release(run.value!, 'keep');
    clock.advance(60_000);
    await settle();
    expect(run.value!.killed).toBe(false);
    expect(pool.stats().ends.reaped).toBe(0);
  });

  it('tells an invocation its execution is lost when the process ended first', async () => {
    const { pool, launcher, retained } = poolWith({ spare: 0 });
    const run = track(pool.acquire());
    await launcher.startAll();
    const holder = run.value!;
    retained.set(holder, 1);
    pool.release(holder, 'keep');
    holder.die();
    await settle();
    const lostError = new ExecutorError('HANDLE_NOT_FOUND', 'the process ended');
    await expect(pool.acquire({ process: holder, lost: () => lostError })).rejects.toBe(lostError);
  });
});

describe('nested runs beyond maxWorkers', () => {
  it('admits a nested run beyond maxWorkers, up to maxNestedRuns, and refuses the next', async () => {
    const { pool, launcher } = poolWith({ maxWorkers: 1, maxNestedRuns: 1, spare: 0 });
    const parent = track(pool.acquire());
    await launcher.startAll();
    const plain = track(pool.acquire());
    const nested = track(pool.acquire(undefined, undefined, true));
    expect(launcher.starting()).toBe(1);
    await launcher.startAll();
    expect(nested.value).toBeDefined();
    expect(nested.value).not.toBe(parent.value);
    // The plain run still waits for the slot within maxWorkers.
    expect(plain.settled).toBe(false);
    const refused = track(pool.acquire(undefined, undefined, true));
    await settle();
    expect((refused.error as ExecutorError).code).toBe('LIMIT_EXCEEDED');
    expect((refused.error as ExecutorError).message).toBe(isolateText.nestedLimit(1));
    // The nested run's release frees its place beyond maxWorkers, not the parent's slot.
    pool.release(nested.value!, 'keep');
    await settle();
    expect(plain.settled).toBe(false);
    pool.release(parent.value!, 'keep');
    await settle();
    expect(plain.settled).toBe(true);
  });

  it('queues a nested run while a slot within maxWorkers is free', async () => {
    const { pool, launcher } = poolWith({ maxWorkers: 2, maxNestedRuns: 0, spare: 0 });
    const parent = track(pool.acquire());
    const nested = track(pool.acquire(undefined, undefined, true));
    await launcher.startAll();
    expect(parent.settled && nested.settled).toBe(true);
    expect(nested.error).toBeUndefined();
  });
});
