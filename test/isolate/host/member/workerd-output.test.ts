/**
 * What workerd itself writes to the host: the events on its control fd, and V8's GC trace on its
 * stdout. Each reader accepts its grammar and answers `null` (or not full) for anything else.
 */
import { describe, expect, it } from 'vitest';
import { parseControlEvent } from '../../../../src/isolate/host/member/control-events.js';
import { heapIsFull, reportsFullHeap } from '../../../../src/isolate/host/member/heap-trace.js';

describe('the control-fd events', () => {
  it('reads the events workerd writes', () => {
    expect(parseControlEvent('{"event":"listen","socket":"control","port":40123}')).toEqual({
      event: 'listen',
      socket: 'control',
      port: 40123,
    });
    expect(parseControlEvent('{"event":"listen-inspector","port":9229}')).toEqual({
      event: 'listen-inspector',
      port: 9229,
    });
    // What workerd writes for a socket on a unix: address.
    expect(parseControlEvent('{"event":"listen","socket":"control","port":0}')).toEqual({
      event: 'listen',
      socket: 'control',
      port: 0,
    });
  });

  it('refuses anything else', () => {
    for (const line of [
      '',
      'listening',
      '{"event":"listen","port":1}',
      '{"event":"listen","socket":"control","port":-1}',
      '{"event":"listen-inspector","port":0}',
      '{"event":"reload","port":1}',
    ]) {
      expect(parseControlEvent(line)).toBeNull();
    }
  });
});

describe("V8's GC trace", () => {
  const line = (after: string) =>
    `[28156:0x13743fa2a000]     2597 ms: Mark-Compact 265.0 (269.2) -> ${after} (278.4) MB, pooled: 7.5 MB, 679.52 / 0.00 ms (average mu = 0.525, current mu = 0.009) allocation failure; scavenge might not succeed`;

  it('reads a heap still at its cap after a full collection as full', () => {
    expect(reportsFullHeap(line('258.6'), 256)).toBe(true);
    expect(reportsFullHeap(line('243.3').replace('Mark-Compact', 'Mark-Compact (reduce)'), 256)).toBe(true);
  });

  it('reads a heap with room left, a scavenge and any other line as not full', () => {
    expect(reportsFullHeap(line('120.0'), 256)).toBe(false);
    expect(reportsFullHeap('[1:0x1]  12 ms: Scavenge 250.0 (260.0) -> 249.0 (260.0) MB, 1.0 / 0.0 ms', 256)).toBe(
      false,
    );
    expect(reportsFullHeap('workerd/server/server.c++:5492: error: Uncaught exception', 256)).toBe(false);
  });

  it('takes a full-heap line as proof only from a process whose resident set is that large', () => {
    expect(heapIsFull(line('258.6'), 256, () => 300)).toBe(true);
    // A line the sandbox printed itself, from a process holding far less.
    expect(heapIsFull(line('258.6'), 256, () => 90)).toBe(false);
    expect(heapIsFull(line('258.6'), 256, () => undefined)).toBe(false);
    expect(heapIsFull(line('120.0'), 256, () => 300)).toBe(false);
  });
});
