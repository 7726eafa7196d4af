/**
 * The status rules, as pure functions: which cells run, which are skipped or unsupported, which
 * skipped cells are probed for staleness, and how an execution settles into a cell.
 * The runner applies them; the tests pin them; docs/matrix.md explains them.
 */
import type { Case, SkipOn } from '../case-model.js';
import type { ColumnSummary, MatrixCell, MatrixColumn } from './model.js';
import { texts } from './texts.js';

/** What the runner should do with one case on one column. */
export type CellPlan =
  | { kind: 'run' }
  | { kind: 'unsupported'; reason: string }
  /** `probe`: run it anyway to detect a stale reason. */
  | { kind: 'skip'; reason: string; probe: boolean };

/** How one execution ended, before the rules turn it into a cell. */
export type Execution =
  /** The case ran and its outcome was judged. */
  | { kind: 'judged'; pass: boolean; reason?: string; diff?: string }
  /** The harness broke: no outcome exists. */
  | { kind: 'infra-error'; reason: string };

/** Does a `skipOn` entry name this column? By exact id, as the catalogue spec reads it (`ours` is not `ours-remote`). */
function namesColumn(versions: readonly string[], column: Pick<MatrixColumn, 'id'>): boolean {
  return versions.includes(column.id);
}

function skipFor(testCase: Pick<Case, 'skipOn'>, column: Pick<MatrixColumn, 'id'>): SkipOn | undefined {
  return testCase.skipOn?.find((entry) => namesColumn(entry.versions, column));
}

export function planCell(
  testCase: Pick<Case, 'reference' | 'reason' | 'skipOn'>,
  column: Pick<MatrixColumn, 'id' | 'kind'>,
): CellPlan {
  if (column.kind === 'reference' && testCase.reference === false) {
    return { kind: 'unsupported', reason: testCase.reason || texts.missingReason };
  }
  const skip = skipFor(testCase, column);
  // A skip is probed unless its entry says the case must not run there (`probe: false`).
  if (skip) return { kind: 'skip', reason: skip.reason, probe: skip.probe !== false };
  return { kind: 'run' };
}

/** Whether the runner executes the case on this column at all. */
export function runsCase(plan: CellPlan): boolean {
  return plan.kind === 'run' || (plan.kind === 'skip' && plan.probe);
}

/**
 * Turns a plan and what happened into the cell. `execution` is undefined when nothing ran
 * (unsupported, unprobed skip, or a probe the column could not make).
 */
export function settleCell(
  caseId: string,
  columnId: string,
  plan: CellPlan,
  execution: Execution | undefined,
): MatrixCell {
  const cell: MatrixCell = { case: caseId, column: columnId, status: 'pass' };
  if (plan.kind === 'unsupported') return { ...cell, status: 'unsupported', reason: plan.reason };
  if (plan.kind === 'skip') {
    if (!plan.probe) return { ...cell, status: 'skip', reason: plan.reason, probe: 'not-probed-unsafe' };
    if (!execution || execution.kind === 'infra-error')
      return { ...cell, status: 'skip', reason: plan.reason, probe: 'not-run' };
    if (execution.pass) return { ...cell, status: 'fail', reason: texts.staleSkip(plan.reason), unexpectedPass: true };
    return { ...cell, status: 'skip', reason: plan.reason, probe: 'still-fails' };
  }
  if (!execution)
    throw new Error(`settleCell: case "${caseId}" on column "${columnId}" was planned to run but has no execution`);
  if (execution.kind === 'infra-error') return { ...cell, status: 'infra-error', reason: execution.reason };
  if (execution.pass) return cell;
  const failed: MatrixCell = { ...cell, status: 'fail', reason: execution.reason ?? texts.expectationFailed([]) };
  if (execution.diff !== undefined) failed.diff = execution.diff;
  return failed;
}

/** Counts per column; `green` when nothing failed and nothing broke. */
export function summarizeColumn(columnId: string, cells: readonly MatrixCell[]): ColumnSummary {
  const summary: ColumnSummary = {
    column: columnId,
    total: 0,
    pass: 0,
    fail: 0,
    skip: 0,
    unsupported: 0,
    infraError: 0,
    unexpectedPass: 0,
    green: true,
  };
  for (const cell of cells) {
    if (cell.column !== columnId) continue;
    summary.total += 1;
    if (cell.status === 'infra-error') summary.infraError += 1;
    else summary[cell.status] += 1;
    if (cell.unexpectedPass) summary.unexpectedPass += 1;
  }
  summary.green = summary.fail === 0 && summary.infraError === 0;
  return summary;
}

export function summarizeRun(
  columns: readonly Pick<MatrixColumn, 'id' | 'infraError'>[],
  cells: readonly MatrixCell[],
) {
  const summaries = columns.map((column) => {
    const summary = summarizeColumn(column.id, cells);
    // A column that never came up is not green even if it had no cell to break.
    if (column.infraError) summary.green = false;
    return summary;
  });
  return { green: summaries.every((summary) => summary.green), columns: summaries };
}
