/**
 * The data model of one matrix run: what `reports/matrix.json` holds and what every writer reads.
 * `schema/matrix.schema.json` describes the same shape; a test keeps the two in step.
 */

/** Every status a cell can have, in the order the report lists them. */
export const CELL_STATUSES = ['pass', 'fail', 'skip', 'unsupported', 'infra-error'] as const;
export type CellStatus = (typeof CELL_STATUSES)[number];

/** `ours`: in-process; `ours-remote`: over `connect()` to a daemon; `reference`: upstream under `wrangler dev`. */
type ColumnKind = 'ours' | 'ours-remote' | 'reference';

/** What a column ran on. `null` means the component takes no part in that column. */
export interface ColumnVersions {
  /** `@cloudflare/codemode` release the column runs (reference columns). */
  codemode: string | null;
  /** This package's version (our columns). */
  executor: string | null;
  workerd: string | null;
  wrangler: string | null;
  /** Where the case's code runs: the sandbox worker (ours: the isolate; reference: the dynamic worker the release loads). */
  compatibilityDate: string | null;
  compatibilityFlags: string[];
  /** Reference columns: the host worker that runs `DynamicWorkerExecutor` under `wrangler dev`. */
  hostCompatibilityDate?: string;
  hostCompatibilityFlags?: string[];
}

export interface MatrixColumn {
  /** `ours`, `ours-remote`, `0.2.2`, ..., `latest`. The id `skipOn` names. */
  id: string;
  /** What the report prints in the header, e.g. `latest (0.5.6)`. */
  label: string;
  kind: ColumnKind;
  versions: ColumnVersions;
  /** Set when the whole column could not run (e.g. `wrangler dev` did not start). */
  infraError?: string;
  /** Wall time the column took, start-up included. Informational only. */
  durationMs?: number;
}

export interface MatrixCase {
  id: string;
  /** Repository-relative path, e.g. `cases/results.yaml`. */
  file: string;
  line: number;
  /** The file stem: `results` for `cases/results.yaml`. */
  area: string;
  description: string;
  features: string[];
}

export interface MatrixCell {
  case: string;
  column: string;
  status: CellStatus;
  /** Why: the skip/unsupported reason from the case, the failure summary, or what broke. */
  reason?: string;
  /** The readable difference when `status` is `fail` because outcomes differed. */
  diff?: string;
  /** A skipped case that passed when probed: the skip reason is stale (status is `fail`). */
  unexpectedPass?: boolean;
  /** What happened to the staleness probe of a skipped cell. */
  probe?: ProbeNote;
}

/** `still-fails`: probed and it still does not pass; `not-probed-unsafe`: its reason says it cannot run safely; `not-run`: the column could not probe it. */
export type ProbeNote = 'still-fails' | 'not-probed-unsafe' | 'not-run';

export interface ColumnSummary {
  column: string;
  total: number;
  pass: number;
  fail: number;
  skip: number;
  unsupported: number;
  infraError: number;
  /** Included in `fail`: skipped cells that passed when probed. */
  unexpectedPass: number;
  /** No fail and no infra-error. */
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
}

export interface MatrixRun {
  schemaVersion: 1;
  run: RunMeta;
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

/** Cells indexed by case × column. */
export function indexCells(cells: readonly MatrixCell[]): Map<string, MatrixCell> {
  return new Map(cells.map((cell) => [cellKey(cell.case, cell.column), cell]));
}
