/**
 * One matrix run: loads the catalogue, runs every column in report order (ours first, so the
 * other columns can be compared with it), judges every cell, and assembles the run model.
 */
import type { LoadedCase } from '../../case-model.js';
import { loadCatalogue } from '../../load-cases.js';
import { catalogueOrder, toMatrixCase } from '../case-entry.js';
import { planCell, settleCell, summarizeRun } from '../cell-rules.js';
import type { MatrixCell, MatrixColumn, MatrixRun } from '../model.js';
import { REPO_ROOT } from '../paths.js';
import { texts } from '../texts.js';
import { gitState } from './git.js';
import type { JudgeContext, Observation } from './judge.js';
import { judgeableNow, judgeCell } from './judge.js';
import { openOurSide, openReferenceColumn, plannedColumns } from './open-columns.js';
import type { Progress } from './progress.js';
import { runColumn } from './run-column.js';

export interface MatrixOptions {
  progress: Progress;
  /** Only these column ids (default: every planned column). */
  columns?: readonly string[];
}

export interface MatrixResult {
  run: MatrixRun;
  cases: LoadedCase[];
}

export async function runMatrix(options: MatrixOptions): Promise<MatrixResult> {
  const startedAt = new Date();
  const { progress } = options;
  const cases = catalogueOrder(loadCatalogue());
  const planned = plannedColumns().filter((column) => !options.columns || options.columns.includes(column.id));
  if (options.columns) {
    const unknown = options.columns.filter((id) => !planned.some((column) => column.id === id));
    if (unknown.length)
      throw new Error(
        `unknown column(s) ${unknown.join(', ')}; the columns are ${plannedColumns()
          .map((column) => column.id)
          .join(', ')}`,
      );
  }

  const observations = new Map<string, Observation>();
  const key = (caseId: string, columnId: string) => `${columnId}\u0000${caseId}`;
  const context: JudgeContext = {
    columns: planned,
    plan: planCell,
    observation: (caseId, columnId) => observations.get(key(caseId, columnId)),
  };

  const columns: MatrixColumn[] = [];
  for (const column of planned) {
    progress.line(texts.progress.opening(column.id));
    const opened = column.kind === 'reference' ? await openReferenceColumn(column.id) : await openOurSide(column.kind);
    columns.push(opened.column);
    await runColumn({
      opened,
      cases,
      context,
      progress,
      record: (caseId, columnId, observation) => observations.set(key(caseId, columnId), observation),
    });
  }

  const cells: MatrixCell[] = [];
  let deferredHeader = false;
  for (const testCase of cases) {
    for (const column of columns) {
      const cell = settleCell(testCase.id, column.id, planCell(testCase, column), judgeCell(testCase, column, context));
      cells.push(cell);
      // Ours without expect could only be judged now that the references ran: report those failures here.
      if (!judgeableNow(testCase, column) && (cell.status === 'fail' || cell.status === 'infra-error')) {
        if (!deferredHeader) progress.line(texts.progress.deferred);
        deferredHeader = true;
        if (cell.status === 'fail') progress.failure(column.id, testCase.file, testCase.id, cell.reason ?? '');
        else progress.infra(column.id, `${testCase.id}: ${cell.reason ?? ''}`);
      }
    }
  }

  const git = gitState();
  const run: MatrixRun = {
    schemaVersion: 1,
    run: {
      date: startedAt.toISOString(),
      durationMs: Date.now() - startedAt.getTime(),
      commit: git.commit,
      dirty: git.dirty,
      node: process.version,
    },
    columns,
    cases: cases.map((testCase) => toMatrixCase(testCase, REPO_ROOT)),
    cells,
    summary: summarizeRun(columns, cells),
  };
  return { run, cases };
}
