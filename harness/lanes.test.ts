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

  it('lets cases that involve no time share the lane up to its limit, while one that does holds it alone', async () => {
    const lane = new CaseLane(1000, 2, () => {}, 2);
    const log: string[] = [];
    const [a, b, c, timed, d] = ['a', 'b', 'c', 'timed', 'd'].map((id) => controlled(log, id)) as [
      ReturnType<typeof controlled>,
      ReturnType<typeof controlled>,
      ReturnType<typeof controlled>,
      ReturnType<typeof controlled>,
      ReturnType<typeof controlled>,
    ];
    const done = [
      lane.run('a', a.work, undefined, false),
      lane.run('b', b.work, undefined, false),
      lane.run('c', c.work, undefined, false),
      lane.run('timed', timed.work, undefined, true),
      lane.run('d', d.work, undefined, false),
    ];
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['start a', 'start b']); // two at once; c waits its turn
    b.finish();
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    a.finish();
    await vi.advanceTimersByTimeAsync(10);
    expect(log.slice(4)).toEqual(['end a']); // the timed case waits until it has the lane to itself
    c.finish();
    await vi.advanceTimersByTimeAsync(10);
    expect(log.slice(5)).toEqual(['end c', 'start timed']);
    await vi.advanceTimersByTimeAsync(500);
    expect(log.slice(7)).toEqual([]); // d, asked after it, starts only once it is done
    timed.finish();
    await vi.advanceTimersByTimeAsync(10);
    expect(log.slice(7)).toEqual(['end timed', 'start d']);
    d.finish();
    expect(await Promise.all(done)).toEqual(['a', 'b', 'c', 'timed', 'd']);
  });

  it('lets a case asked alone wait for the shared ones ahead of it, and none start beside it before it runs long', async () => {
    const lane = new CaseLane(1000, 2, () => {}, 3);
    const log: string[] = [];
    const shared = controlled(log, 'shared');
    const timed = controlled(log, 'timed');
    const later = controlled(log, 'later');
    void lane.run('shared', shared.work, undefined, false);
    void lane.run('timed', timed.work);
    void lane.run('later', later.work, undefined, false);
    await vi.advanceTimersByTimeAsync(10);
    expect(log).toEqual(['start shared']);
    shared.finish();
    await vi.advanceTimersByTimeAsync(999);
    expect(log).toEqual(['start shared', 'end shared', 'start timed']);
    await vi.advanceTimersByTimeAsync(20); // past the long bound: it waits beside, and the lane is free
    expect(log).toEqual(['start shared', 'end shared', 'start timed', 'start later']);
    expect(lane.waiting).toEqual(['timed']);
    timed.finish();
    later.finish();
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
