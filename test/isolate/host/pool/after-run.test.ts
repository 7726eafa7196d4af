/**
 * What the pool does with a member once its run is over (src/isolate/host/pool/after-run.ts), by the
 * run's fate and where the member is. Every cell is written out here by hand: a cell changed in
 * the table fails its test. How the pool carries each out is pool-policy.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { type AfterRun, afterRun, type ReleaseMoment } from '../../../../src/isolate/host/pool/after-run.js';
import type { ProcessFate } from '../../../../src/isolate/host/run/run-ending.js';

const CELLS: [ProcessFate, ReleaseMoment, AfterRun][] = [
  ['keep', 'serving', { do: 'reuse' }],
  ['retire', 'serving', { do: 'retire', cause: 'killed' }],
  ['kill', 'serving', { do: 'end', cause: 'killed' }],
  ['killed', 'serving', { do: 'awaitEnd' }],
  ['dead', 'serving', { do: 'awaitEnd' }],

  ['keep', 'disposing', { do: 'end', cause: 'disposed' }],
  ['retire', 'disposing', { do: 'end', cause: 'disposed' }],
  ['kill', 'disposing', { do: 'end', cause: 'disposed' }],
  ['killed', 'disposing', { do: 'awaitEnd' }],
  ['dead', 'disposing', { do: 'awaitEnd' }],

  ['keep', 'ended', { do: 'forget' }],
  ['retire', 'ended', { do: 'forget' }],
  ['kill', 'ended', { do: 'forget' }],
  ['killed', 'ended', { do: 'forget' }],
  ['dead', 'ended', { do: 'forget' }],
];

describe('what the pool does after a run', () => {
  it.each(CELLS)('a %s process, %s, is handled as listed', (fate, moment, after) => {
    expect(afterRun(fate, moment)).toEqual(after);
  });
});
