/**
 * Writes one run into a reports directory: matrix.json, a history record, then the views that
 * read the whole history (index.html, matrix.md) and badge.json.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryRecord, Transition } from './history.js';
import { computeTransitions, historyFileName, parseHistoryRecord, toHistoryRecord } from './history.js';
import type { MatrixRun } from './model.js';
import { renderBadge } from './write-badge.js';
import { renderIndexHtml } from './write-html.js';
import { renderMatrixMarkdown } from './write-markdown.js';

/** Where matrix.json points editors for validation, relative to reports/. */
export const MATRIX_SCHEMA_REF = '../schema/matrix.schema.json';

function renderMatrixJson(run: MatrixRun): string {
  return `${JSON.stringify({ $schema: MATRIX_SCHEMA_REF, ...run }, null, 2)}\n`;
}

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

export interface WrittenReports {
  files: string[];
  transitions: Transition[];
}

export function writeReports(run: MatrixRun, reportsDir: string): WrittenReports {
  const historyDir = join(reportsDir, 'history');
  mkdirSync(historyDir, { recursive: true });
  const files: string[] = [];
  const write = (path: string, text: string) => {
    writeFileSync(path, text);
    files.push(path);
  };
  write(join(reportsDir, 'matrix.json'), renderMatrixJson(run));
  write(join(historyDir, historyFileName(run.run.date)), `${JSON.stringify(toHistoryRecord(run))}\n`);
  const transitions = computeTransitions(readHistory(historyDir));
  write(join(reportsDir, 'index.html'), renderIndexHtml(run, transitions));
  write(join(reportsDir, 'matrix.md'), renderMatrixMarkdown(run, transitions));
  write(join(reportsDir, 'badge.json'), `${JSON.stringify(renderBadge(run), null, 2)}\n`);
  return { files, transitions };
}
