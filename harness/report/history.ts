/**
 * `history/`: one compact record per run (case × column statuses only), and what changed between
 * runs. An infra-error is not a result, so it neither starts nor ends a change: the last real
 * status carries over it. A column one run did not have is not a change either.
 */
import { messageOf } from '../../src/protocol/index.js';
import type { CellChange, CellStatus, MatrixRun, RunChanges } from './model.js';
import { CELL_STATUSES, cellKey } from './model.js';
import { reportTexts } from './texts.js';

/** One letter per status, so a record stays small: `p f s u i`; `-` is no cell. */
const LETTER: Record<CellStatus, string> = { pass: 'p', fail: 'f', skip: 's', unsupported: 'u', 'infra-error': 'i' };
const FROM_LETTER = new Map<string, CellStatus>(CELL_STATUSES.map((status) => [LETTER[status], status]));
const HISTORY_LEGEND =
  'p=pass f=fail s=skip u=unsupported i=infra-error -=no cell; one letter per column, in columns order';

export interface HistoryRecord {
  schemaVersion: 1;
  date: string;
  commit: string | null;
  /** Uncommitted changes in the checkout (null: unknown). Records before the nightly lack it. */
  dirty?: boolean | null;
  legend: string;
  /** Each column with the `@cloudflare/codemode` release it ran (null for ours), so `latest` moving shows. */
  columns: { id: string; release: string | null }[];
  /** Case id → one letter per column. */
  cases: Record<string, string>;
}

export function toHistoryRecord(run: MatrixRun): HistoryRecord {
  const letters = new Map(run.cells.map((cell) => [cellKey(cell.case, cell.column), LETTER[cell.status]]));
  const cases: Record<string, string> = {};
  for (const { id } of run.cases)
    cases[id] = run.columns.map((column) => letters.get(cellKey(id, column.id)) ?? '-').join('');
  return {
    schemaVersion: 1,
    date: run.run.date,
    commit: run.run.commit,
    dirty: run.run.dirty,
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
    throw new Error(reportTexts.historyNotJson(source, messageOf(error)));
  }
  const record = value as Partial<HistoryRecord>;
  if (
    record?.schemaVersion !== 1 ||
    typeof record.date !== 'string' ||
    !Array.isArray(record.columns) ||
    typeof record.cases !== 'object' ||
    record.cases === null
  )
    throw new Error(reportTexts.notHistoryRecord(source));
  for (const [caseId, letters] of Object.entries(record.cases)) {
    if (
      typeof letters !== 'string' ||
      letters.length !== record.columns.length ||
      [...letters].some((letter) => letter !== '-' && !FROM_LETTER.has(letter))
    )
      throw new Error(reportTexts.badHistoryStatuses(source, caseId, letters, record.columns.length));
  }
  return record as HistoryRecord;
}

/** One run of the history and what it changed. */
export interface HistoryEntry {
  date: string;
  commit: string | null;
  changes: RunChanges;
}

/** What each run changed, oldest run first in both input and output; the first run's `previous` is null. */
export function changesByRun(records: readonly HistoryRecord[]): HistoryEntry[] {
  const ordered = [...records].sort((a, b) => a.date.localeCompare(b.date));
  const last = new Map<string, { status: CellStatus; release: string | null; code: string | null }>();
  /** What a run's code was, when it is known exactly: a commit with no uncommitted changes. */
  const codeOf = (record: HistoryRecord) => (record.commit !== null && record.dirty === false ? record.commit : null);
  return ordered.map((record, index) => {
    const before = ordered[index - 1];
    const changes: CellChange[] = [];
    const flaky: CellChange[] = [];
    const code = codeOf(record);
    for (const [caseId, letters] of Object.entries(record.cases)) {
      record.columns.forEach((column, position) => {
        const status = FROM_LETTER.get(letters[position] ?? '-');
        if (status === undefined || status === 'infra-error') return;
        const key = cellKey(caseId, column.id);
        const seen = last.get(key);
        if (seen && seen.status !== status) {
          const change: CellChange = { case: caseId, column: column.id, from: seen.status, to: status };
          if (seen.release !== column.release) change.releases = { from: seen.release, to: column.release };
          const nothingMoved = code !== null && seen.code === code && seen.release === column.release;
          (nothingMoved ? flaky : changes).push(change);
        }
        last.set(key, { status, release: column.release, code });
      });
    }
    const previousCases = new Set(Object.keys(before?.cases ?? {}));
    const currentCases = Object.keys(record.cases);
    return {
      date: record.date,
      commit: record.commit,
      changes: {
        previous: before ? { date: before.date, commit: before.commit } : null,
        changes,
        newCases: before ? currentCases.filter((id) => !previousCases.has(id)) : [],
        removedCases: before ? [...previousCases].filter((id) => !(id in record.cases)) : [],
        ...(flaky.length ? { flaky } : {}),
      },
    };
  });
}
