/**
 * The recorded surface table, `recorded.json`: one measured `Surface` per side, written one entry
 * per line so that a re-recording reads as a reviewable diff. Only `record.ts` writes it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../../src/protocol/index.js';
import type { ColumnVersions } from '../reference/columns.js';
import type { SurfaceSide } from './measure.js';
import { tableLacksSide, tableMissing } from './messages.js';
import type { Surface } from './probe.js';

export const TABLE_PATH = fileURLToPath(new URL('./recorded.json', import.meta.url));

export interface OursMeasuredOn {
  composition: string;
  package: string;
  workerd: string;
}

export interface RecordedTable {
  about: string;
  measuredOn: { reference?: ColumnVersions; ours?: OursMeasuredOn };
  reference?: Surface;
  ours?: Surface;
}

export const TABLE_ABOUT =
  'Surface inventory: every entry was measured by harness/surface/probe.source.js on a live side. Regenerate with `npx tsx harness/surface/record.ts`; do not edit by hand.';

export function readTable(): RecordedTable {
  try {
    return JSON.parse(readFileSync(TABLE_PATH, 'utf8')) as RecordedTable;
  } catch (error) {
    throw new Error(tableMissing(TABLE_PATH, messageOf(error)));
  }
}

export function recordedSurface(table: RecordedTable, side: SurfaceSide): Surface {
  const surface = table[side];
  if (!surface) throw new Error(tableLacksSide(TABLE_PATH, side));
  return surface;
}

function surfaceLines(surface: Surface): string {
  const keys = Object.keys(surface).sort();
  return keys
    .map((key, i) => `    ${JSON.stringify(key)}: ${JSON.stringify(surface[key])}${i < keys.length - 1 ? ',' : ''}`)
    .join('\n');
}

function formatTable(table: RecordedTable): string {
  const parts = [
    `  "about": ${JSON.stringify(table.about)}`,
    `  "measuredOn": ${JSON.stringify(table.measuredOn, null, 2).replace(/\n/g, '\n  ')}`,
  ];
  for (const side of ['reference', 'ours'] as const) {
    const surface = table[side];
    if (surface) parts.push(`  ${JSON.stringify(side)}: {\n${surfaceLines(surface)}\n  }`);
  }
  return `{\n${parts.join(',\n')}\n}\n`;
}

export function writeTable(table: RecordedTable): void {
  writeFileSync(TABLE_PATH, formatTable(table));
}
