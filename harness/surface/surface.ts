/**
 * The surface inventory. `probe.source.js`, read as text so that no compiler rewrites it, runs as
 * the code of one `execute` on a live side and returns a `Surface`. `recorded.json` holds one per
 * side, one entry per line so that a re-recording reads as a reviewable diff (only record.ts
 * writes it). The generated part of docs/runtime-deviations.md lists each recorded difference
 * between ours and the reference, with its reason from `DEVIATION_REASONS`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../../src/protocol/index.js';
import type { Case } from '../case-model.js';
import type { Side } from '../side-model.js';
import { texts } from '../texts.js';

const t = texts.surface;

/** What the probe measured about one name, as user code sees it. */
export interface SurfaceEntry {
  /** `own`, or the name of the prototype that holds it. Absent on capability entries. */
  owner?: string;
  /** `data` or `accessor` (a getter/setter pair). Absent on capability entries. */
  access?: 'data' | 'accessor';
  /** `typeof`, refined for functions into `class`, `constructor` or `function`; `throws` if reading failed. */
  kind: string;
  /** `length` of a function, else null. */
  arity: number | null;
  /** The name of the prototype's constructor (or its brand), `null` for a primitive. */
  prototype: string | null;
  /** `Object.prototype.toString` tag of an object or function, else null. */
  brand: string | null;
}

/** Key (`global <name>`, `capability <name>`, `member <capability>.<name>`) → entry. */
export type Surface = Record<string, SurfaceEntry>;

export const SURFACE_SIDES = ['reference', 'ours'] as const;
export type SurfaceSide = (typeof SURFACE_SIDES)[number];

/** The column the inventory reads: the newest release, since that is what a host installs today. */
export const SURFACE_REFERENCE_COLUMN = 'latest';

/**
 * Why our surface differs from the reference's, per group of inventory keys. Every difference the
 * recorded table holds must match one; the first that matches a key gives its reason.
 */
const DEVIATION_REASONS: readonly { keys: RegExp; reason: string }[] = [
  {
    keys: /^member console\.createTask$/,
    reason:
      'An artefact of wrangler dev, not of upstream: V8 defines console.createTask only while an inspector is attached, and wrangler dev always starts workerd with --inspector-addr (checked on plain workerd 1.20260426.1: `typeof console.createTask` is "undefined" without that flag, "function" with it). Our pool runs workerd without an inspector.',
  },
];

const PROBE_CASE: Case = {
  id: 'surface-probe',
  description: 'Reads the global surface, the members of every capability and their brands',
  features: [],
  code: readFileSync(new URL('./probe.source.js', import.meta.url), 'utf8'),
  expect: { result: { any: true }, logs: { any: true } },
};

/** Runs the probe on a started side: its record, or an error showing what came back instead. */
export async function measureSurface(side: Side): Promise<Surface> {
  const outcome = await side.run(PROBE_CASE);
  const { result } = outcome;
  const isRecord = typeof result === 'object' && result !== null && !Array.isArray(result);
  if (outcome.error !== undefined || outcome.threw !== undefined || !isRecord)
    throw new Error(t.probeFailed(side.name, outcome));
  return result as Surface;
}

export interface RecordedTable {
  about: string;
  /** What each side ran on when it was measured. */
  measuredOn: Partial<Record<SurfaceSide, object>>;
  reference?: Surface;
  ours?: Surface;
}

export const TABLE_PATH = fileURLToPath(new URL('./recorded.json', import.meta.url));
export const TABLE_ABOUT =
  'Surface inventory: every entry was measured by harness/surface/probe.source.js on a live side. Regenerate with `npx tsx harness/surface/record.ts`; do not edit by hand.';

export function readTable(): RecordedTable {
  try {
    return JSON.parse(readFileSync(TABLE_PATH, 'utf8')) as RecordedTable;
  } catch (error) {
    throw new Error(t.tableMissing(TABLE_PATH, messageOf(error)));
  }
}

export function recordedSurface(table: RecordedTable, side: SurfaceSide): Surface {
  const surface = table[side];
  if (!surface) throw new Error(t.tableLacksSide(TABLE_PATH, side));
  return surface;
}

export function writeTable(table: RecordedTable): void {
  const parts = [
    `  "about": ${JSON.stringify(table.about)}`,
    `  "measuredOn": ${JSON.stringify(table.measuredOn, null, 2).replace(/\n/g, '\n  ')}`,
  ];
  for (const side of SURFACE_SIDES) {
    const surface = table[side];
    if (!surface) continue;
    const lines = Object.keys(surface)
      .sort()
      .map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(surface[key])}`);
    parts.push(`  ${JSON.stringify(side)}: {\n${lines.join(',\n')}\n  }`);
  }
  writeFileSync(TABLE_PATH, `{\n${parts.join(',\n')}\n}\n`);
}

/** The fields in the order a reader compares them. */
const FIELDS: readonly (keyof SurfaceEntry)[] = ['kind', 'arity', 'prototype', 'brand', 'owner', 'access'];

/** Each key on which two surfaces differ, with the fields that do (all a side has, when the other lacks the key). */
function differences(a: Surface, b: Surface): { key: string; fields: (keyof SurfaceEntry)[] }[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((key) => {
    const [x, y] = [a[key], b[key]];
    if (x && y) {
      const fields = FIELDS.filter((field) => x[field] !== y[field]);
      return fields.length > 0 ? [{ key, fields }] : [];
    }
    return [{ key, fields: FIELDS.filter((field) => (x ?? y)?.[field] !== undefined) }];
  });
}

/** How `after` differs from `before`, one line per key. Empty when they agree. */
export function diffSurfaces(before: Surface, after: Surface, labels: { before: string; after: string }): string[] {
  return differences(before, after).map(({ key, fields }) => {
    const [a, b] = [before[key], after[key]];
    if (a === undefined) return `${key}: only on ${labels.after} ${JSON.stringify(b)}`;
    if (b === undefined) return `${key}: only on ${labels.before} ${JSON.stringify(a)}`;
    const each = fields.map(
      (field) =>
        `${field} ${JSON.stringify(a[field])} on ${labels.before}, ${JSON.stringify(b[field])} on ${labels.after}`,
    );
    return `${key}: ${each.join('; ')}`;
  });
}

/** Each difference between the recorded sides, the differing fields of each, and why. */
export function deviationRows(reference: Surface, ours: Surface) {
  const show = (entry: SurfaceEntry | undefined, fields: readonly (keyof SurfaceEntry)[]) =>
    entry === undefined ? 'absent' : fields.map((field) => `${field} ${String(entry[field] ?? '—')}`).join(', ');
  return differences(reference, ours).map(({ key, fields }) => ({
    key,
    reference: show(reference[key], fields),
    ours: show(ours[key], fields),
    reason: DEVIATION_REASONS.find((entry) => entry.keys.test(key))?.reason ?? t.unexplained,
  }));
}

const DOC_PATH = fileURLToPath(new URL('../../docs/runtime-deviations.md', import.meta.url));
const DOC_START = '<!-- surface-deviations:start (generated by harness/surface/record.ts) -->';
const DOC_END = '<!-- surface-deviations:end -->';

/** The rows grouped by reason, each group a reason followed by its rows, in first-key order. */
function renderDeviationSection(table: RecordedTable): string {
  const rows = deviationRows(recordedSurface(table, 'reference'), recordedSurface(table, 'ours'));
  const groups = new Map<string, typeof rows>();
  for (const row of rows) groups.set(row.reason, [...(groups.get(row.reason) ?? []), row]);
  const escapePipes = (text: string) => text.replace(/\|/g, '\\|');
  const tables = [...groups].map(([reason, members]) =>
    [
      reason,
      '',
      '| entry | reference | ours |',
      '|---|---|---|',
      ...members.map(
        (row) => `| \`${escapePipes(row.key)}\` | ${escapePipes(row.reference)} | ${escapePipes(row.ours)} |`,
      ),
    ].join('\n'),
  );
  return `${DOC_START}\n${rows.length === 0 ? t.noDifference : tables.join('\n\n')}\n${DOC_END}`;
}

/** The doc around its generated section, and the section itself. */
function docParts(): { before: string; section: string; after: string } {
  const doc = readFileSync(DOC_PATH, 'utf8');
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (start < 0 || end < start) throw new Error(t.docMarkersMissing(DOC_PATH, DOC_START, DOC_END));
  const after = end + DOC_END.length;
  return { before: doc.slice(0, start), section: doc.slice(start, after), after: doc.slice(after) };
}

export function writeDeviationSection(table: RecordedTable): void {
  const { before, after } = docParts();
  writeFileSync(DOC_PATH, before + renderDeviationSection(table) + after);
}

/** Throws unless the doc's generated section is exactly what the table renders to. */
export function assertDeviationSectionCurrent(table: RecordedTable): void {
  if (docParts().section !== renderDeviationSection(table)) throw new Error(t.docOutOfDate(DOC_PATH));
}
