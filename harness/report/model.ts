/**
 * The data model of one matrix run: what `matrix.json` holds and what every writer reads.
 * `schema/matrix.schema.json` describes the same shape; a test keeps the two in step.
 */

import type { Boundary, Triage } from '../case-model.js';

/** Every status a cell can have, in the order the report lists them. */
export const CELL_STATUSES = ['pass', 'fail', 'skip', 'unsupported', 'infra-error'] as const;
export type CellStatus = (typeof CELL_STATUSES)[number];

/** What a column ran on. `null` means the component takes no part in that column. */
export interface ColumnVersions {
  codemode: string | null;
  executor: string | null;
  workerd: string | null;
  wrangler: string | null;
  compatibilityDate: string | null;
  compatibilityFlags: string[];
  hostCompatibilityDate?: string;
  hostCompatibilityFlags?: string[];
}

export interface MatrixColumn {
  /** `ours`, `ours-remote`, `0.2.2`, ..., `latest`. */
  id: string;
  /** What the report prints in the header, e.g. `latest (0.5.6)`. */
  label: string;
  kind: 'ours' | 'ours-remote' | 'ours-worker' | 'ours-workerd-newest' | 'reference';
  versions: ColumnVersions;
  /** Set when the whole column could not run (e.g. `wrangler dev` did not start). */
  infraError?: string;
  /** Wall time the column took, start-up included. Informational only. */
  durationMs?: number;
  /** A release resolved at run time (`newest`, `compare`): when it was published, and whether the peer range admits it. */
  release?: ColumnRelease;
  /** The column ran the same release as this one, so its cells are that column's, not run twice. */
  sameAs?: string;
}

interface ColumnRelease {
  /** The registry's publish time, ISO 8601, or null when it gives none. */
  published: string | null;
  /** This package's peer range for `@cloudflare/codemode`. */
  peerRange: string;
  inPeerRange: boolean;
  /** `registry`: the registry's newest; `option`: named with `--newest` or `--compare`. */
  chosenBy: 'registry' | 'option';
}

export interface MatrixCase {
  id: string;
  /** Repository-relative path, e.g. `cases/result.yaml`. */
  file: string;
  line: number;
  /** The file stem: `result` for `cases/result.yaml`. */
  area: string;
  description: string;
  features: string[];
  /** Why the case expects something else of upstream, when it does. */
  upstreamReason?: string;
  /** The expectation involves time (harness/timing.ts): a failing cell is rerun once. */
  timing?: true;
  /** A known upstream defect or an open question about the case. */
  triage?: Triage;
}

export interface MatrixCell {
  case: string;
  column: string;
  status: CellStatus;
  /** Why: the boundary, why the reference cannot run it, the failure summary, or what broke. */
  reason?: string;
  /** A few words the report shows beside the cell: the boundary of a skip, why a cell is unsupported. */
  label?: string;
  /** A skip entry's own sentence, shown after its boundary. */
  note?: string;
  /** The readable difference when the cell failed its expectation. */
  diff?: string;
  /** A skipped cell that passed: the skip is stale (status is `fail`). */
  unexpectedPass?: true;
  /**
   * Not the case's own `expect`: `upstream` when judged against `upstream.expect`, `skip` when a
   * skipped cell met the expect of its skip entry (it fails the way the skip says).
   */
  expectation?: 'upstream' | 'skip';
  /**
   * The cell's first attempt, when it was rerun: a case that involves time failed once and ran
   * again; `status` is the rerun's. A first failure whose rerun did not fail is flaky, not a failure.
   */
  rerun?: { status: CellStatus; reason?: string };
}

/** A cell whose first attempt failed and whose rerun did not: flaky, and not counted as a failure. */
export function isFlaky(cell: MatrixCell): boolean {
  return cell.rerun?.status === 'fail' && cell.status !== 'fail';
}

export interface ColumnSummary {
  column: string;
  counts: Record<CellStatus, number>;
  /** Included in `counts.fail`: skipped cells that passed. */
  unexpectedPass: number;
  /** No fail and no infra-error, and the column came up. */
  green: boolean;
}

interface RunMeta {
  /** ISO 8601, UTC, when the run started. */
  date: string;
  durationMs: number;
  /** `git rev-parse HEAD`, or null outside a git checkout. */
  commit: string | null;
  /** Uncommitted changes in the checkout, or null when unknown. */
  dirty: boolean | null;
  node: string;
  /** The docs/interpreting.md version the cells were judged by. */
  interpreting: number;
  /** Set when the run was limited with `--columns`: the columns it left out. */
  columnsLeftOut?: string[];
}

export interface MatrixRun {
  schemaVersion: 2;
  run: RunMeta;
  /** What changed since the previous run written to the same directory (set when the reports are written). */
  since?: RunChanges;
  /**
   * Set when the `newest` column ran another release than the one it is compared with (`latest`,
   * or `compare`): every case whose status or outcome differs between the two.
   */
  releaseDiff?: ReleaseDiff;
  /**
   * Set when `ours-workerd-newest` ran another workerd than `ours`: every case whose status or
   * outcome differs between ours on the pinned workerd and ours on the registry's newest.
   */
  workerdDiff?: ReleaseDiff;
  /** The release boundaries the skips name (cases/boundaries.yaml). */
  boundaries: Boundary[];
  columns: MatrixColumn[];
  cases: MatrixCase[];
  cells: MatrixCell[];
  summary: {
    /** The exit code's verdict: no fail and no infra-error anywhere. */
    green: boolean;
    columns: ColumnSummary[];
  };
}

/** Key for a case × column lookup. */
export function cellKey(caseId: string, columnId: string): string {
  return `${caseId}\u0000${columnId}`;
}

/** Counts per column; green when nothing failed or broke and the column came up. */
export function summarize(columns: readonly Pick<MatrixColumn, 'id' | 'infraError'>[], cells: readonly MatrixCell[]) {
  const summaries = columns.map((column): ColumnSummary => {
    const counts = Object.fromEntries(CELL_STATUSES.map((status) => [status, 0])) as Record<CellStatus, number>;
    let unexpectedPass = 0;
    for (const cell of cells) {
      if (cell.column !== column.id) continue;
      counts[cell.status] += 1;
      if (cell.unexpectedPass) unexpectedPass += 1;
    }
    const green = counts.fail === 0 && counts['infra-error'] === 0 && !column.infraError;
    return { column: column.id, counts, unexpectedPass, green };
  });
  return { green: summaries.every((summary) => summary.green), columns: summaries };
}

/** A cell whose status changed between two runs (history.ts). */
export interface CellChange {
  case: string;
  column: string;
  from: CellStatus;
  to: CellStatus;
  /** Set when the column ran another release than in the run the old status is from. */
  releases?: { from: string | null; to: string | null };
}

/** What one run changed against the runs before it. */
export interface RunChanges {
  /**
   * The run compared with; null when no earlier run is recorded. `snapshot`: none was recorded
   * where this run was written, so it is the committed snapshot's latest run.
   */
  previous: { date: string; commit: string | null; snapshot?: true } | null;
  changes: CellChange[];
  /** Cases this run has that the previous run did not. */
  newCases: string[];
  /** Cases the previous run had that this run does not. */
  removedCases: string[];
  /**
   * Cells that changed status although nothing they ran on did (the same commit, a clean checkout,
   * the same release): flaky, listed apart, and not counted as changes.
   */
  flaky?: CellChange[];
}

/** The release diff's shape (release-diff.ts computes it). */
export const RELEASE_DIFF_KINDS = ['newly-failing', 'newly-passing', 'changed-outcome'] as const;
export type ReleaseDiffKind = (typeof RELEASE_DIFF_KINDS)[number];

/** One side of a row: the cell's status and what the release produced (JSON, cut to a readable length). */
export interface ReleaseDiffSide {
  status: CellStatus;
  outcome?: string;
}

export interface ReleaseDiffRow {
  case: string;
  kind: ReleaseDiffKind;
  from: ReleaseDiffSide;
  to: ReleaseDiffSide;
}

export interface ReleaseDiff {
  /** What differs between the two columns: `workerd` for ours on the newest workerd against ours; absent, the codemode release. */
  of?: 'workerd';
  from: { column: string; release: string };
  to: { column: string; release: string };
  rows: ReleaseDiffRow[];
  /** Cases left out because either side is an infra-error: unknown, not unchanged. */
  unknown: string[];
}
