import { describe, expect, it } from 'vitest';
import { Engine } from './engine.js';
import { MAX_WAITING_CASES } from './lanes.js';
import { loadCatalogue } from './load-cases.js';
import { LONG_WAITS, longFirst } from './long-cases.js';
import { holdsLaneAlone } from './timing.js';

describe('the cases known to wait long', () => {
  const { cases, boundaries } = loadCatalogue();

  it('are cases of the catalogue, each waiting on a clock, no more than may wait at once', () => {
    const byId = new Map(cases.map((item) => [item.id, item]));
    expect(LONG_WAITS.filter((id) => !byId.has(id))).toEqual([]);
    // A case that involves time holds the lane alone until it has run 2 s, as it would where it stands.
    expect(LONG_WAITS.filter((id) => !holdsLaneAlone(byId.get(id)!))).toEqual([]);
    expect(new Set(LONG_WAITS).size).toBe(LONG_WAITS.length);
    expect(LONG_WAITS.length).toBeLessThanOrEqual(MAX_WAITING_CASES);
  });

  it('start first on every column, the matrix and the catalogue files alike', () => {
    expect([...new Engine(boundaries).knownLong]).toEqual(LONG_WAITS);
    const ordered = longFirst(cases, LONG_WAITS);
    expect(ordered.slice(0, LONG_WAITS.length).map((item) => item.id)).toEqual(LONG_WAITS);
    expect(ordered.slice(LONG_WAITS.length)).toEqual(cases.filter((item) => !LONG_WAITS.includes(item.id)));
  });
});

describe('longFirst', () => {
  const items = ['a', 'b', 'c', 'd'].map((id) => ({ id }));

  it('puts the long ones first in the order known, the others in their own, and ignores ids it lacks', () => {
    expect(longFirst(items, ['c', 'x', 'a']).map((item) => item.id)).toEqual(['c', 'a', 'b', 'd']);
    expect(longFirst(items, []).map((item) => item.id)).toEqual(['a', 'b', 'c', 'd']);
  });
});
