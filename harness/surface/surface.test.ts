/**
 * The surface inventory: the probe runs on a live reference column and on a live sandbox of ours,
 * and each must read exactly as `recorded.json` records it. A capability that arrives, leaves or
 * changes shape on either side fails here until `record.ts` re-records it and, if it is a
 * difference between the sides, `DEVIATION_REASONS` explains it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Side } from '../side-model.js';
import { startSide } from '../sides.js';
import { texts } from '../texts.js';
import {
  assertDeviationSectionCurrent,
  deviationRows,
  diffSurfaces,
  measureSurface,
  readTable,
  recordedSurface,
  SURFACE_REFERENCE_COLUMN,
} from './surface.js';

const table = readTable();
const labels = { before: 'recorded', after: 'live' };

describe('surface inventory', () => {
  let column: Side | undefined;

  beforeAll(async () => {
    column = await startSide(SURFACE_REFERENCE_COLUMN);
  }, 300_000);

  afterAll(async () => {
    await column?.dispose();
  });

  it(`reads on the reference column ${SURFACE_REFERENCE_COLUMN} as recorded`, async () => {
    const live = await measureSurface(column!);
    expect(diffSurfaces(recordedSurface(table, 'reference'), live, labels)).toEqual([]);
  });

  it('reads on ours (CodemodeExecutor over IsolateExecutor) as recorded', async () => {
    const ours = await startSide('ours');
    const live = await measureSurface(ours).finally(() => ours.dispose());
    expect(diffSurfaces(recordedSurface(table, 'ours'), live, labels)).toEqual([]);
  });

  it('explains every recorded difference between ours and the reference, in docs/runtime-deviations.md', () => {
    const rows = deviationRows(recordedSurface(table, 'reference'), recordedSurface(table, 'ours'));
    expect(rows.filter((row) => row.reason === texts.surface.unexplained).map((row) => row.key)).toEqual([]);
    assertDeviationSectionCurrent(table);
  });
});
