/**
 * One matrix run: every case on every column asked for, one column after another in report order,
 * each opened, run and closed by the engine; then the run model every report is written from.
 */
import { execFileSync } from 'node:child_process';
import { basename, relative, resolve, sep } from 'node:path';
import type { Boundary, LoadedCase } from './case-model.js';
import { COLUMN_IDS, type ColumnId, describeColumn } from './columns.js';
import type { Engine } from './engine.js';
import type { MatrixCase, MatrixCell, MatrixColumn, MatrixRun } from './report/model.js';
import { summarize } from './report/model.js';
import { INTERPRETING_VERSION } from './texts.js';

export const REPO_ROOT = resolve(import.meta.dirname, '..');

/** What the matrix reports while it runs. */
export interface MatrixProgress {
  columnStart(column: string, total: number): void;
  cell(column: string, item: LoadedCase, cell: MatrixCell, done: number, total: number): void;
  columnDone(column: MatrixColumn, cells: readonly MatrixCell[]): void;
}

function git(args: string[]): string | undefined {
  try {
    // --no-optional-locks: `status` must not refresh (write) the index.
    return execFileSync('git', ['--no-optional-locks', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
}

function toMatrixCase(item: LoadedCase): MatrixCase {
  const file = relative(REPO_ROOT, resolve(item.file)).split(sep).join('/');
  const entry: MatrixCase = {
    id: item.id,
    file,
    line: item.line,
    area: basename(file).replace(/\.ya?ml$/, ''),
    description: item.description,
    features: [...item.features],
  };
  if (item.upstream) entry.upstreamReason = item.upstream.reason;
  return entry;
}

export async function runMatrix(
  engine: Engine,
  { cases, boundaries }: { cases: readonly LoadedCase[]; boundaries: ReadonlyMap<string, Boundary> },
  columns: readonly ColumnId[],
  progress: MatrixProgress,
): Promise<MatrixRun> {
  const started = new Date();
  const ordered = [...cases].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  const described: MatrixColumn[] = [];
  const cells: MatrixCell[] = [];
  for (const id of COLUMN_IDS.filter((column) => columns.includes(column))) {
    if (engine.isAborted) break;
    const column = describeColumn(id);
    described.push(column);
    const columnStarted = Date.now();
    progress.columnStart(id, ordered.length);
    const failure = column.infraError ?? (await engine.open(id));
    if (failure !== undefined) column.infraError = failure;
    const own: MatrixCell[] = [];
    for (const item of ordered) {
      if (engine.isAborted) break;
      const { cell } = await engine.cell(item, id);
      own.push(cell);
      progress.cell(id, item, cell, own.length, ordered.length);
    }
    await engine.close(id);
    column.durationMs = Date.now() - columnStarted;
    cells.push(...own);
    progress.columnDone(column, own);
  }
  const status = git(['status', '--porcelain']);
  const commit = git(['rev-parse', 'HEAD'])?.trim();
  const leftOut = COLUMN_IDS.filter((id) => !columns.includes(id));
  return {
    schemaVersion: 2,
    run: {
      date: started.toISOString(),
      durationMs: Date.now() - started.getTime(),
      commit: commit && /^[0-9a-f]{7,64}$/.test(commit) ? commit : null,
      dirty: status === undefined ? null : status.trim().length > 0,
      node: process.version,
      interpreting: INTERPRETING_VERSION,
      ...(leftOut.length ? { columnsLeftOut: leftOut } : {}),
    },
    boundaries: [...boundaries.values()],
    columns: described,
    cases: ordered.map(toMatrixCase),
    cells,
    summary: summarize(described, cells),
  };
}
