import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CaseLane } from './lanes.js';

/** A case whose end the test decides, recording when it started. */
function controlled(log: string[], id: string) {
  let finish!: () => void;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      log.push(`start ${id}`);
      await ended;
      log.push(`end ${id}`);
      return id;
    },
    finish,
  };
}

describe('CaseLane', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('runs cases one at a time in the order asked, whatever order they become ready in', async () => {
    const lane = new CaseLane(1000, 2);
    const log: string[] = [];
    const a = controlled(log, 'a');
    const b = controlled(log, 'b');
    let open!: () => void;
    const opening = new Promise<void>((resolve) => (open = resolve));
    const first = lane.run('a', a.work, opening);
    const second = lane.run('b', b.work);
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual([]); // b is ready, but a was asked first
    open();
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['start a']);
    a.finish();
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['start a', 'end a', 'start b']);
    b.finish();
    expect([await first, await second]).toEqual(['a', 'b']);
  });

  it('lets the next case start once one runs long, names it as waiting, and frees the lane', async () => {
    const told: string[] = [];
    const lane = new CaseLane(1000, 2, (id) => told.push(id));
    const log: string[] = [];
    const long = controlled(log, 'long');
    const short = controlled(log, 'short');
    void lane.run('long', long.work);
    void lane.run('short', short.work);
    let free = false;
    void lane.whenFree().then(() => (free = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(log).toEqual(['start long']);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(['start long', 'start short']);
    expect(lane.waiting).toEqual(['long']);
    expect(told).toEqual(['long']);
    expect(free).toBe(false);
    short.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(free).toBe(true);
    long.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(lane.waiting).toEqual([]);
  });

  it('holds the lane while the waiting places are full, and leaves it when one frees', async () => {
    const lane = new CaseLane(1000, 1);
    const log: string[] = [];
    const first = controlled(log, 'first');
    const second = controlled(log, 'second');
    const third = controlled(log, 'third');
    void lane.run('first', first.work);
    void lane.run('second', second.work);
    void lane.run('third', third.work);
    await vi.advanceTimersByTimeAsync(5000);
    expect(log).toEqual(['start first', 'start second']);
    expect(lane.waiting).toEqual(['first']);
    first.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(lane.waiting).toEqual(['second']);
    expect(log).toEqual(['start first', 'start second', 'end first', 'start third']);
    second.finish();
    third.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(lane.waiting).toEqual([]);
  });
});
