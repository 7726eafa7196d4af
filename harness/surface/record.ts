/**
 * Re-records the surface table from live runs: `npx tsx harness/surface/record.ts`.
 *   --side reference|ours   measure only this side (repeatable); the other keeps its recording
 *   --doc-only              measure nothing; rewrite the generated section of docs/runtime-deviations.md
 * It then rewrites recorded.json and, with both sides recorded, that section of the doc.
 */
import { parseArgs } from 'node:util';
import { describeColumn } from '../columns.js';
import type { Side } from '../side-model.js';
import { startSide } from '../sides.js';
import { texts } from '../texts.js';
import {
  deviationRows,
  measureSurface,
  type RecordedTable,
  readTable,
  SURFACE_REFERENCE_COLUMN,
  SURFACE_SIDES,
  type SurfaceSide,
  TABLE_ABOUT,
  TABLE_PATH,
  writeDeviationSection,
  writeTable,
} from './surface.js';

function sidesAsked(argv: string[]): SurfaceSide[] {
  let values: { side?: string[]; 'doc-only'?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { side: { type: 'string', multiple: true }, 'doc-only': { type: 'boolean' } },
    }));
  } catch {
    throw new Error(texts.surface.unknownArgument(argv.join(' ')));
  }
  const unknown = values.side?.find((side) => !(SURFACE_SIDES as readonly string[]).includes(side));
  if (unknown !== undefined) throw new Error(texts.surface.unknownArgument(`--side ${unknown}`));
  if (values['doc-only']) return [];
  return (values.side as SurfaceSide[] | undefined) ?? [...SURFACE_SIDES];
}

/** What the side is measured on: the column's versions, and for ours the composition the probe ran through. */
async function measure(side: SurfaceSide): Promise<{ surface: RecordedTable['ours']; on: object }> {
  const column = side === 'ours' ? 'ours' : SURFACE_REFERENCE_COLUMN;
  const started: Side = await startSide(column);
  try {
    const surface = await measureSurface(started);
    const { versions } = describeColumn(column);
    const composition = 'new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1 } }))';
    return { surface, on: side === 'ours' ? { composition, ...versions } : { column, ...versions } };
  } finally {
    await started.dispose();
  }
}

async function main(): Promise<void> {
  const sides = sidesAsked(process.argv.slice(2));
  let table: RecordedTable = { about: TABLE_ABOUT, measuredOn: {} };
  try {
    table = { ...readTable(), about: TABLE_ABOUT };
  } catch {} // A first recording starts from nothing.
  for (const side of sides) {
    const { surface, on } = await measure(side);
    table = { ...table, [side]: surface, measuredOn: { ...table.measuredOn, [side]: on } };
  }
  if (sides.length > 0) writeTable(table);
  console.log(
    texts.surface.recorded(TABLE_PATH, Object.keys(table.reference ?? {}).length, Object.keys(table.ours ?? {}).length),
  );
  if (table.reference && table.ours) {
    writeDeviationSection(table);
    const rows = deviationRows(table.reference, table.ours);
    const unexplained = rows.filter((row) => row.reason === texts.surface.unexplained);
    console.log(texts.surface.differences(rows.length, unexplained.length));
    for (const row of unexplained) console.log(`  ${row.key}: reference ${row.reference} | ours ${row.ours}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
