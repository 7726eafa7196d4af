/** The event call options: their rows are docs/observing.md's table, and a wrong one is refused naming it. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_QUEUED_EVENTS, EVENT_ROWS, resolveEventOptions } from '../../src/events/options.js';
import { codeSpans, firstNumber, readDocs, tableUnder } from '../support/docs-tables.js';

describe('the event options', () => {
  it("are docs/observing.md's table, row for row", () => {
    const rows = tableUnder(readDocs('observing.md'), '### The bound, and a slow callback');
    expect(rows.map((cells) => codeSpans(cells[0]!)[0])).toEqual(Object.keys(EVENT_ROWS));
    for (const [cell, default_, description] of rows) {
      const row = EVENT_ROWS[codeSpans(cell!)[0] as keyof typeof EVENT_ROWS];
      expect(description).toBe(row.description);
      if ('default' in row) expect(firstNumber(default_!)).toBe(row.default);
    }
    expect(EVENT_ROWS.maxQueuedEvents.default).toBe(DEFAULT_MAX_QUEUED_EVENTS);
  });

  it('are off without onEvent, and refuse a bound without one, or out of range, naming it', () => {
    expect(resolveEventOptions('execute', {})).toBeNull();
    expect(resolveEventOptions('execute', undefined)).toBeNull();
    expect(() => resolveEventOptions('execute', { maxQueuedEvents: 5 })).toThrow(
      'execute() option maxQueuedEvents bounds the events queued for onEvent, and no onEvent was given',
    );
    expect(() => resolveEventOptions('invokeHandle', { onEvent: () => {}, maxQueuedEvents: 100_001 })).toThrow(
      'invokeHandle() option maxQueuedEvents must be an integer from 1 to 100000, or undefined (1000); got 100001',
    );
  });
});
