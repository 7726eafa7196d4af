/**
 * Writes one run into a reports directory: its history record first, so what changed since the
 * previous run is known, then matrix.json, matrix.md and index.html, which all say it. The run is
 * checked against `schema/matrix.schema.json` (JSON Schema 2020-12, ajv) first.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { readFuzzSummary } from './fuzz-section.js';
import { changesByRun, type HistoryRecord, historyFileName, parseHistoryRecord, toHistoryRecord } from './history.js';
import type { MatrixRun } from './model.js';
import { reportTexts } from './texts.js';
import { renderIndexHtml } from './write-html.js';
import { renderMatrixMarkdown } from './write-markdown.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const MATRIX_SCHEMA = join(REPO_ROOT, 'schema', 'matrix.schema.json');
/** How many earlier runs that changed something the page lists below the newest. */
const EARLIER_RUNS_SHOWN = 20;

export function readHistory(historyDir: string): HistoryRecord[] {
  let names: string[];
  try {
    names = readdirSync(historyDir);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => parseHistoryRecord(readFileSync(join(historyDir, name), 'utf8'), join(historyDir, name)));
}

/**
 * The runs this one is read against, oldest first, itself included: the runs in its own directory
 * or, when that has none before it (a fresh clone's first run), the history of
 * `fallbackHistoryDir` (the committed snapshot's) before it, then this one. What changed since the
 * previous run, the earlier changes and the trend all read these, so the page never compares with
 * the snapshot in one place and says there is no history in another.
 */
function historyOfRun(run: MatrixRun, historyDir: string, fallbackHistoryDir: string | undefined) {
  const own = readHistory(historyDir);
  const hasEarlier = own.some((record) => record.date < run.run.date);
  const fallback =
    hasEarlier || fallbackHistoryDir === undefined
      ? []
      : readHistory(fallbackHistoryDir).filter((record) => record.date < run.run.date);
  return { records: [...fallback, ...own], fromSnapshot: fallback.length };
}

/**
 * Writes the reports; returns the run as written, with what changed since the previous one (from
 * `fallbackHistoryDir` when `reportsDir` records no earlier run).
 */
export function writeReports(run: MatrixRun, reportsDir: string, fallbackHistoryDir?: string): MatrixRun {
  const historyDir = join(reportsDir, 'history');
  mkdirSync(historyDir, { recursive: true });
  writeFileSync(join(historyDir, historyFileName(run.run.date)), `${JSON.stringify(toHistoryRecord(run))}\n`);
  const { records, fromSnapshot } = historyOfRun(run, historyDir, fallbackHistoryDir);
  const history = changesByRun(records);
  const newest = history.findLast((entry) => entry.date === run.run.date)?.changes;
  const since =
    newest?.previous && fromSnapshot > 0
      ? { ...newest, previous: { ...newest.previous, snapshot: true as const } }
      : newest;
  const written: MatrixRun = since ? { ...run, since } : run;
  const earlier = history
    .filter((entry) => entry.date < run.run.date && entry.changes.changes.length > 0)
    .reverse()
    .slice(0, EARLIER_RUNS_SHOWN);
  const fuzz = readFuzzSummary(reportsDir);
  const fromHere = (path: string) => relative(reportsDir, path).split(sep).join('/') || '.';
  writeFileSync(
    join(reportsDir, 'matrix.json'),
    `${JSON.stringify({ $schema: fromHere(MATRIX_SCHEMA), ...written }, null, 2)}\n`,
  );
  writeFileSync(join(reportsDir, 'matrix.md'), renderMatrixMarkdown(written, fromHere(REPO_ROOT), fuzz));
  writeFileSync(
    join(reportsDir, 'index.html'),
    renderIndexHtml(written, earlier, fromHere(REPO_ROOT), records, fromSnapshot, fuzz),
  );
  return written;
}

let compiled: ValidateFunction | undefined;

export function matrixSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(MATRIX_SCHEMA, 'utf8')) as Record<string, unknown>;
}

/** Every problem, one per line (`/cells/3: must have required property 'reason'`); empty when valid. */
export function matrixProblems(value: unknown): string[] {
  compiled ??= new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(matrixSchema());
  if (compiled(value)) return [];
  return (compiled.errors ?? []).map(
    (error) =>
      `${error.instancePath || '/'}: ${error.message ?? 'is invalid'}${error.params && 'allowedValues' in error.params ? ` (${JSON.stringify(error.params.allowedValues)})` : ''}`,
  );
}

export function assertValidMatrix(value: unknown): void {
  const problems = matrixProblems(value);
  if (problems.length) throw new Error(reportTexts.matrixInvalid(problems));
}
