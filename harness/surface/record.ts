/**
 * Re-records the surface table from live runs: `npx tsx harness/surface/record.ts`.
 *   --side reference|ours   measure only this side (repeatable); the other keeps its recording
 *   --doc-only              measure nothing; rewrite the generated section of docs/runtime-deviations.md
 * It then rewrites recorded.json and, with both sides recorded, that section of the doc.
 */
import { readFileSync } from 'node:fs';
import { installedVersion } from '../reference/columns.js';
import { startReferenceColumn } from '../reference/wrangler.js';
import { UNEXPLAINED, unknownSide } from './messages.js';
import {
  measureOurSurface,
  measureReferenceSurface,
  SURFACE_REFERENCE_COLUMN,
  SURFACE_SIDES,
  type SurfaceSide,
} from './probe.js';
import {
  deviationRows,
  type OursMeasuredOn,
  type RecordedTable,
  readTable,
  TABLE_ABOUT,
  TABLE_PATH,
  writeDeviationSection,
  writeTable,
} from './table.js';

function parseArguments(argv: readonly string[]): { sides: SurfaceSide[]; docOnly: boolean } {
  const sides: SurfaceSide[] = [];
  let docOnly = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--doc-only') docOnly = true;
    else if (arg === '--side') {
      const value = argv[(i += 1)] ?? '';
      if (!(SURFACE_SIDES as readonly string[]).includes(value)) throw new Error(unknownSide(value, SURFACE_SIDES));
      sides.push(value as SurfaceSide);
    } else throw new Error(`Unknown argument "${arg}"; expected --side reference|ours or --doc-only`);
  }
  return { sides: docOnly ? [] : sides.length > 0 ? sides : [...SURFACE_SIDES], docOnly };
}

function existingTable(): RecordedTable {
  try {
    return readTable();
  } catch {
    return { about: TABLE_ABOUT, measuredOn: {} };
  }
}

function oursMeasuredOn(): OursMeasuredOn {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    name: string;
    version: string;
  };
  return {
    composition: 'new CodemodeExecutor(new IsolateExecutor({ pool: { maxWorkers: 1 } }))',
    package: `${manifest.name}@${manifest.version}`,
    workerd: installedVersion('workerd'),
  };
}

async function main(): Promise<void> {
  const { sides } = parseArguments(process.argv.slice(2));
  const table = { ...existingTable(), about: TABLE_ABOUT };
  if (sides.includes('reference')) {
    const column = await startReferenceColumn(SURFACE_REFERENCE_COLUMN);
    try {
      table.reference = await measureReferenceSurface(column);
      table.measuredOn = { ...table.measuredOn, reference: column.versions };
    } finally {
      await column.stop();
    }
  }
  if (sides.includes('ours')) {
    table.ours = await measureOurSurface();
    table.measuredOn = { ...table.measuredOn, ours: oursMeasuredOn() };
  }
  if (sides.length > 0) writeTable(table);
  console.log(
    `${TABLE_PATH}: reference ${Object.keys(table.reference ?? {}).length} entries, ours ${Object.keys(table.ours ?? {}).length} entries`,
  );
  if (table.reference && table.ours) {
    writeDeviationSection(table);
    const rows = deviationRows(table.reference, table.ours);
    const unexplained = rows.filter((row) => row.reason === UNEXPLAINED);
    console.log(`${rows.length} differences between ours and the reference; ${unexplained.length} without a reason`);
    for (const row of unexplained) console.log(`  ${row.key}: reference ${row.reference} | ours ${row.ours}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
