/**
 * `reports/history/`: one compact record per run (case × column statuses only), and the
 * transitions the page shows: for each case whose status changed between runs, which columns
 * changed, and the first column (in report order: ours, then releases oldest to newest) where it did.
 * An infra-error is not a result, so it neither starts nor ends a transition: the last real status
 * carries over it.
 */

import { messageOf } from '../../src/protocol/errors.js';
import type { CellStatus, MatrixRun } from './model.js';
import { CELL_STATUSES, cellKey, indexCells } from './model.js';

/** One letter per status, so a record stays small: `p f s u i`. */
const LETTER: Record<CellStatus, string> = { pass: 'p', fail: 'f', skip: 's', unsupported: 'u', 'infra-error': 'i' };
const FROM_LETTER = new Map<string, CellStatus>(CELL_STATUSES.map((status) => [LETTER[status], status]));

const HISTORY_LEGEND =
  'p=pass f=fail s=skip u=unsupported i=infra-error; one letter per column, in columns order; -=no cell';

interface HistoryColumn {
  id: string;
  /** The `@cloudflare/codemode` release a reference column ran, so `latest` moving is visible. */
  release: string | null;
}

export interface HistoryRecord {
  schemaVersion: 1;
  date: string;
  commit: string | null;
  legend: string;
  columns: HistoryColumn[];
  /** Case id → one letter per column. */
  cases: Record<string, string>;
}

interface StatusChange {
  column: string;
  from: CellStatus;
  to: CellStatus;
  /** Set when the column's release differs between the two runs (e.g. `latest` moved). */
  fromRelease?: string | null;
  toRelease?: string | null;
}

export interface Transition {
  case: string;
  /** The run where the new status first appeared. */
  date: string;
  commit: string | null;
  /** The run before it. */
  previousDate: string;
  /** The first column, in report order, whose status changed. */
  firstColumn: string;
  changes: StatusChange[];
}

export function toHistoryRecord(run: MatrixRun): HistoryRecord {
  const cells = indexCells(run.cells);
  const cases: Record<string, string> = {};
  for (const testCase of run.cases) {
    cases[testCase.id] = run.columns
      .map((column) => {
        const cell = cells.get(cellKey(testCase.id, column.id));
        return cell ? LETTER[cell.status] : '-';
      })
      .join('');
  }
  return {
    schemaVersion: 1,
    date: run.run.date,
    commit: run.run.commit,
    legend: HISTORY_LEGEND,
    columns: run.columns.map((column) => ({
      id: column.id,
      release: column.kind === 'reference' ? column.versions.codemode : null,
    })),
    cases,
  };
}

/** `2026-11-29T03:15:00.123Z` → `2026-11-29T031500.json`: sortable, and legal on every file system. */
export function historyFileName(date: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(date);
  if (!match) throw new Error(`historyFileName: "${date}" is not an ISO 8601 date-time`);
  return `${match[1]}T${match[2]}${match[3]}${match[4]}.json`;
}

/** Reads one record, refusing anything that is not one (a history file must never be half-understood). */
export function parseHistoryRecord(text: string, source: string): HistoryRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source}: not JSON (${messageOf(error)})`);
  }
  const record = value as Partial<HistoryRecord>;
  if (
    record?.schemaVersion !== 1 ||
    typeof record.date !== 'string' ||
    !Array.isArray(record.columns) ||
    typeof record.cases !== 'object' ||
    record.cases === null
  ) {
    throw new Error(`${source}: not a history record (expected schemaVersion 1 with date, columns and cases)`);
  }
  for (const [caseId, letters] of Object.entries(record.cases)) {
    if (
      typeof letters !== 'string' ||
      letters.length !== record.columns.length ||
      [...letters].some((letter) => letter !== '-' && !FROM_LETTER.has(letter))
    ) {
      throw new Error(
        `${source}: case "${caseId}" has statuses "${String(letters)}", expected ${record.columns.length} of p f s u i -`,
      );
    }
  }
  return record as HistoryRecord;
}

function statusesOf(record: HistoryRecord, caseId: string): Map<string, CellStatus> {
  const statuses = new Map<string, CellStatus>();
  const letters = record.cases[caseId];
  if (letters === undefined) return statuses;
  record.columns.forEach((column, index) => {
    const status = FROM_LETTER.get(letters[index] ?? '-');
    if (status) statuses.set(column.id, status);
  });
  return statuses;
}

/** Transitions across records, oldest run first in the input; newest transition first in the output. */
export function computeTransitions(records: readonly HistoryRecord[]): Transition[] {
  const ordered = [...records].sort((a, b) => a.date.localeCompare(b.date));
  /** case × column → the last real status and the release it was seen on. */
  const last = new Map<string, { status: CellStatus; release: string | null }>();
  const perRun: Transition[][] = [];
  ordered.forEach((record, index) => {
    const transitions: Transition[] = [];
    perRun.push(transitions);
    const releases = new Map(record.columns.map((column) => [column.id, column.release]));
    for (const caseId of Object.keys(record.cases)) {
      const changes: StatusChange[] = [];
      for (const [columnId, status] of statusesOf(record, caseId)) {
        if (status === 'infra-error') continue;
        const key = cellKey(caseId, columnId);
        const before = last.get(key);
        const release = releases.get(columnId) ?? null;
        if (before && before.status !== status) {
          const change: StatusChange = { column: columnId, from: before.status, to: status };
          if (before.release !== release) Object.assign(change, { fromRelease: before.release, toRelease: release });
          changes.push(change);
        }
        last.set(key, { status, release });
      }
      const previous = ordered[index - 1];
      if (changes.length && previous) {
        transitions.push({
          case: caseId,
          date: record.date,
          commit: record.commit,
          previousDate: previous.date,
          firstColumn: changes[0]!.column,
          changes,
        });
      }
    }
  });
  // Newest run first; within a run, catalogue order.
  return perRun.reverse().flat();
}
