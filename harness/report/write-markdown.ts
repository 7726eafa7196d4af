/**
 * `reports/matrix.md`: the page's summary for reading on a forge. Column summary, failures (with
 * their diffs folded), infra-errors listed apart (they are not results), and recent transitions.
 */

import { columnById, markdownCell, markdownCode, versionsLine } from './format.js';
import type { Transition } from './history.js';
import type { MatrixCase, MatrixCell, MatrixRun } from './model.js';
import { texts } from './texts.js';

/** Long lists are cut here; the page and matrix.json hold everything. */
export const MARKDOWN_LIST_LIMIT = 50;

function caseLink(testCase: MatrixCase | undefined, caseId: string): string {
  if (!testCase) return markdownCode(caseId);
  return `[${markdownCode(testCase.id)}](../${testCase.file}#L${testCase.line})`;
}

function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const marks = '`'.repeat(longest + 1);
  return `${marks}\n${text}\n${marks}`;
}

function cellList(run: MatrixRun, cells: readonly MatrixCell[], withDiff: boolean): string[] {
  const cases = new Map(run.cases.map((testCase) => [testCase.id, testCase]));
  const lines: string[] = [];
  for (const cell of cells.slice(0, MARKDOWN_LIST_LIMIT)) {
    const column = columnById(run.columns, cell.column)?.label ?? cell.column;
    lines.push(
      `- ${caseLink(cases.get(cell.case), cell.case)} on **${markdownCell(column)}**: ${markdownCell(cell.reason ?? '')}`,
    );
    if (withDiff && cell.diff)
      lines.push('', '  <details><summary>diff</summary>', '', indent(fence(cell.diff)), '', '  </details>', '');
  }
  if (cells.length > MARKDOWN_LIST_LIMIT)
    lines.push(`- … and ${cells.length - MARKDOWN_LIST_LIMIT} more (see index.html or matrix.json)`);
  return lines;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

export function renderMatrixMarkdown(run: MatrixRun, transitions: readonly Transition[]): string {
  const { summary } = run;
  const lines: string[] = [
    '# Compatibility matrix',
    '',
    `Run ${run.run.date} · commit ${run.run.commit ? markdownCode(run.run.commit.slice(0, 12)) : 'unknown'}${run.run.dirty ? ' (with uncommitted changes)' : ''} · ${Math.round(run.run.durationMs / 1000)} s · ${run.cases.length} cases`,
    '',
    summary.green
      ? '**Green**: no failure and no infra-error in any column.'
      : '**Not green**: see the failures and infra-errors below.',
    '',
    'Open [index.html](index.html) for the grid, with every reason and diff.',
    '',
    '## Columns',
    '',
    '| column | versions | pass | fail | skip | unsupported | infra-error |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const column of run.columns) {
    const counts = summary.columns.find((entry) => entry.column === column.id);
    if (!counts) continue;
    const mark = counts.green
      ? texts.statusSymbol.pass
      : counts.fail
        ? texts.statusSymbol.fail
        : texts.statusSymbol['infra-error'];
    const failCell = counts.unexpectedPass ? `${counts.fail} (${counts.unexpectedPass} stale skip)` : `${counts.fail}`;
    lines.push(
      `| ${mark} **${markdownCell(column.label)}** | ${markdownCell(versionsLine(column.versions))} | ${counts.pass} | ${failCell} | ${counts.skip} | ${counts.unsupported} | ${counts.infraError} |`,
    );
  }
  const failures = run.cells.filter((cell) => cell.status === 'fail');
  lines.push('', `## Failures (${failures.length})`, '');
  lines.push(...(failures.length ? cellList(run, failures, true) : ['None.']));

  // Infra-errors are reported apart: they say the harness broke, not how a column behaves. A
  // column that never came up is one line, not one line per case.
  const brokenColumns = run.columns.filter((column) => column.infraError);
  const broken = new Set(brokenColumns.map((column) => column.id));
  const infra = run.cells.filter((cell) => cell.status === 'infra-error');
  lines.push('', `## Infra-errors (${infra.length}), not results`, '');
  if (!infra.length && !brokenColumns.length) lines.push('None.');
  for (const column of brokenColumns) {
    const count = infra.filter((cell) => cell.column === column.id).length;
    lines.push(
      `- column **${markdownCell(column.label)}** did not run (${count} cells): ${markdownCell(column.infraError ?? '')}`,
    );
  }
  lines.push(
    ...cellList(
      run,
      infra.filter((cell) => !broken.has(cell.column)),
      false,
    ),
  );

  lines.push('', '## Transitions', '');
  if (!transitions.length) lines.push('No case changed status between recorded runs.');
  else {
    lines.push('| run | case | first column | changes |', '|---|---|---|---|');
    const cases = new Map(run.cases.map((testCase) => [testCase.id, testCase]));
    for (const transition of transitions.slice(0, MARKDOWN_LIST_LIMIT)) {
      const changes = transition.changes.map(
        (change) =>
          `${change.column}: ${change.from} → ${change.to}${change.toRelease !== undefined ? ` (${change.fromRelease ?? '?'} → ${change.toRelease ?? '?'})` : ''}`,
      );
      lines.push(
        `| ${transition.date} | ${caseLink(cases.get(transition.case), transition.case)} | ${markdownCell(transition.firstColumn)} | ${markdownCell(changes.join('; '))} |`,
      );
    }
    if (transitions.length > MARKDOWN_LIST_LIMIT)
      lines.push('', `… and ${transitions.length - MARKDOWN_LIST_LIMIT} older transitions in index.html.`);
  }
  lines.push('');
  return lines.join('\n');
}
