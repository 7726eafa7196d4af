/**
 * The release diff: every case whose status or outcome differs between two reference columns of
 * one run (the registry's newest release against the newest pinned one, or the release named with
 * `--compare`), sorted as wpt.fyi sorts a regressions table: newly failing, newly passing, changed
 * outcome. An infra-error is not a result, so a case with one on either side is counted apart.
 * A case whose expectation holds a matcher (`match`, `any`) expects a value that varies from run
 * to run (a random id, a timestamp), so only its status is compared.
 */
import {
  type CellStatus,
  cellKey,
  type MatrixCell,
  type MatrixColumn,
  RELEASE_DIFF_KINDS,
  type ReleaseDiff,
  type ReleaseDiffKind,
  type ReleaseDiffRow,
} from './model.js';

/** An outcome as the diff shows it: long enough to see the difference, short enough for a table. */
const OUTCOME_CHARS = 600;

function outcomeText(outcome: unknown): string | undefined {
  if (outcome === undefined) return undefined;
  const text = JSON.stringify(outcome);
  return text.length > OUTCOME_CHARS ? `${text.slice(0, OUTCOME_CHARS)}…` : text;
}

function kindOf(from: CellStatus, to: CellStatus): ReleaseDiffKind {
  if (to === 'fail' && from !== 'fail') return 'newly-failing';
  if (to === 'pass' && from !== 'pass') return 'newly-passing';
  return 'changed-outcome';
}

/** Whether a case's data holds a matcher that admits varying values (`{ match }`, `{ any: true }`). */
export function expectsVaryingValues(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(expectsVaryingValues);
  if (value === null || typeof value !== 'object') return false;
  const keys = Object.keys(value);
  if (keys.length === 1 && (keys[0] === 'match' || keys[0] === 'any')) return true;
  return Object.values(value).some(expectsVaryingValues);
}

/**
 * The diff between two columns' cells; `outcomes` holds what each cell's release produced
 * (`cellKey(case, column)`), absent where nothing ran. Rows keep catalogue order within each kind.
 */
export function releaseDiff(
  from: MatrixColumn,
  to: MatrixColumn,
  caseIds: readonly string[],
  cells: readonly MatrixCell[],
  outcomes: ReadonlyMap<string, unknown>,
  statusOnly: ReadonlySet<string> = new Set(),
  of?: 'workerd',
): ReleaseDiff {
  const release = (column: MatrixColumn) =>
    (of === 'workerd' ? column.versions.workerd : column.versions.codemode) ?? '?';
  const byKey = new Map(cells.map((cell) => [cellKey(cell.case, cell.column), cell]));
  const rows: ReleaseDiffRow[] = [];
  const unknown: string[] = [];
  for (const id of caseIds) {
    const before = byKey.get(cellKey(id, from.id));
    const after = byKey.get(cellKey(id, to.id));
    if (!before || !after) continue;
    if (before.status === 'infra-error' || after.status === 'infra-error') {
      unknown.push(id);
      continue;
    }
    const fromOutcome = outcomeText(outcomes.get(cellKey(id, from.id)));
    const toOutcome = outcomeText(outcomes.get(cellKey(id, to.id)));
    if (before.status === after.status && (statusOnly.has(id) || fromOutcome === toOutcome)) continue;
    rows.push({
      case: id,
      kind: kindOf(before.status, after.status),
      from: { status: before.status, ...(fromOutcome === undefined ? {} : { outcome: fromOutcome }) },
      to: { status: after.status, ...(toOutcome === undefined ? {} : { outcome: toOutcome }) },
    });
  }
  rows.sort((a, b) => RELEASE_DIFF_KINDS.indexOf(a.kind) - RELEASE_DIFF_KINDS.indexOf(b.kind));
  return {
    ...(of ? { of } : {}),
    from: { column: from.id, release: release(from) },
    to: { column: to.id, release: release(to) },
    rows,
    unknown,
  };
}
