/**
 * The catalogue spec's closing summary: per side, how many cases passed, were skipped and failed,
 * read from vitest's own task results (so a test that timed out counts as the failure it is), and
 * the side's versions. Each test carries `meta.catalogue` naming its side and, when skipped, why.
 */
import type { SideName } from './case-model.js';
import { SUMMARY_TITLE } from './catalogue-messages.js';

/** What the spec attaches to every case test. */
export interface CatalogueTestMeta {
  side: SideName;
  caseId: string;
  /** The skip reason when the case does not run on this side. */
  skip?: string;
  /** Set when the test failed because the harness broke (no outcome existed). */
  infra?: boolean;
}

declare module 'vitest' {
  interface TaskMeta {
    catalogue?: CatalogueTestMeta;
  }
}

/** The parts of a vitest task the tally reads. */
export interface TaskLike {
  type: string;
  mode: string;
  result?: { state: string };
  meta: { catalogue?: CatalogueTestMeta };
  tasks?: readonly TaskLike[];
}

export interface Tally {
  passed: number;
  /** Skipped with a reason: `skipOn`, or `reference: false` on a reference column. */
  skipped: number;
  failed: number;
  /** Of `failed`: the harness broke, no outcome existed. */
  infra: number;
  /** Planned to run but did not: filtered out, or the side's describe failed before its tests. */
  notRun: number;
}

export function emptyTally(): Tally {
  return { passed: 0, skipped: 0, failed: 0, infra: 0, notRun: 0 };
}

/** Walks the task tree and counts every catalogue test by the side it ran on. */
export function tallyTasks(root: TaskLike, into = new Map<SideName, Tally>()): Map<SideName, Tally> {
  for (const task of root.tasks ?? []) {
    if (task.type !== 'test') {
      tallyTasks(task, into);
      continue;
    }
    const meta = task.meta.catalogue;
    if (!meta) continue;
    let tally = into.get(meta.side);
    if (!tally) into.set(meta.side, (tally = emptyTally()));
    const state = task.result?.state ?? task.mode;
    if (state === 'pass') tally.passed += 1;
    else if (state === 'fail') {
      tally.failed += 1;
      if (meta.infra) tally.infra += 1;
    } else if (meta.skip !== undefined) tally.skipped += 1;
    else tally.notRun += 1;
  }
  return into;
}

export interface SummaryRow {
  side: SideName;
  /** e.g. `codemode 0.5.6 · workerd 1.20260426.1 · wrangler 4.86.0`. */
  versions: string;
  tally: Tally;
  /** Skips that have no test of their own on this side (`reference: false` cases on a column). */
  extraSkips: number;
  /** One line on why the side did not start or broke during the run, when it did. */
  trouble?: string;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** A plain-text table for the console, one row per side, then each side's trouble (did not start, broke). */
export function formatSummary(rows: readonly SummaryRow[], caseCount: number, standaloneCount: number): string {
  const header = ['side', 'versions', 'passed', 'skipped', 'failed', 'not run'];
  const cells = rows.map((row) => {
    const skipped = row.tally.skipped + row.extraSkips;
    const failed = row.tally.infra > 0 ? `${row.tally.failed} (${row.tally.infra} infra)` : String(row.tally.failed);
    return [row.side, row.versions, String(row.tally.passed), String(skipped), failed, String(row.tally.notRun)];
  });
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: readonly string[]) =>
    `  ${values.map((value, i) => pad(value, widths[i]!, i >= 2)).join('  ')}`.trimEnd();
  const verdict = rows.every((row) => row.tally.failed === 0 && row.tally.notRun === 0 && row.trouble === undefined)
    ? 'all green'
    : 'NOT green';
  const out = [
    `${SUMMARY_TITLE}: ${caseCount} cases, ${standaloneCount} of them reference: false (ours only; counted as skipped on each reference column) — ${verdict}`,
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...cells.map(line),
  ];
  for (const row of rows) if (row.trouble !== undefined) out.push(`  ${row.trouble}`);
  return out.join('\n');
}
