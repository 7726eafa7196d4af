/**
 * `reports/badge.json`, a shields.io endpoint badge: `212/212 ours · 0.5.6 ✓`.
 * "ours" counts the cases that ran on our in-process column; the release part is the newest
 * reference column. An infra-error is spelled out and greys the badge: it must never read as a result.
 */
import type { MatrixRun } from './model.js';

export interface EndpointBadge {
  schemaVersion: 1;
  label: string;
  message: string;
  color: string;
}

const BADGE_LABEL = 'codemode compat';

export function renderBadge(run: MatrixRun): EndpointBadge {
  const summaryOf = (id: string) => run.summary.columns.find((entry) => entry.column === id);
  const parts: string[] = [];

  const ours = run.columns.find((column) => column.kind === 'ours');
  const oursSummary = ours && summaryOf(ours.id);
  if (!ours || !oursSummary || ours.infraError || oursSummary.infraError) parts.push('ours infra-error');
  else parts.push(`${oursSummary.pass}/${oursSummary.pass + oursSummary.fail} ours`);

  const references = run.columns.filter((column) => column.kind === 'reference');
  const newest = references[references.length - 1];
  const newestSummary = newest && summaryOf(newest.id);
  if (newest && newestSummary) {
    const name = newest.versions.codemode ?? newest.id;
    if (newest.infraError || newestSummary.infraError) parts.push(`${name} infra-error`);
    else parts.push(`${name} ${newestSummary.fail ? '✗' : '✓'}`);
  }

  const anyFail = run.summary.columns.some((entry) => entry.fail > 0);
  const anyInfra =
    run.summary.columns.some((entry) => entry.infraError > 0) || run.columns.some((column) => column.infraError);
  const color = anyFail ? 'red' : anyInfra ? 'lightgrey' : 'brightgreen';
  return { schemaVersion: 1, label: BADGE_LABEL, message: parts.join(' · '), color };
}
