/**
 * `matrix.md`: the report for reading on a forge, in the order a nightly reader wants it: the
 * verdict, what changed since the previous run, the columns, then every failure with its diff and
 * the infra-errors apart (they are not results).
 */
import type { FuzzSummary } from '../fuzz/run.js';
import { fuzzMarkdown } from './fuzz-section.js';
import {
  isFlaky,
  type MatrixCase,
  type MatrixCell,
  type MatrixRun,
  RELEASE_DIFF_KINDS,
  type ReleaseDiff,
  type ReleaseDiffSide,
} from './model.js';
import { changesByCase, columnHeadNote, sameReleaseNote, reportTexts as t, versionsLine } from './texts.js';

/** Long lists are cut here; the page and matrix.json hold everything. */
export const MARKDOWN_LIST_LIMIT = 50;

/** A cell of a markdown table: pipes escaped, line breaks flattened. */
function cellText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').trim();
}

/** Inline code that survives backticks inside the text. */
function code(text: string): string {
  return text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``;
}

function fence(text: string): string {
  const marks = '`'.repeat(Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length)) + 1);
  return `${marks}\n${text}\n${marks}`;
}

/** A cell's link on the page, as `index.html#cell=<case>/<column>`. */
const cellHref = (caseId: string, column: string) =>
  `index.html#cell=${encodeURIComponent(caseId)}/${encodeURIComponent(column)}`;

/** The release diff as wpt.fyi's regressions table: one table per kind, both outcomes, links to both cells. */
function releaseDiffLines(diff: ReleaseDiff, link: (id: string) => string, triageOf: (id: string) => string): string[] {
  const lines = [`## ${t.releaseDiffTitle(diff)}`, '', t.releaseDiffIntro(diff), ''];
  if (diff.rows.length === 0) lines.push(t.releaseDiffNone(diff), '');
  const side = (caseId: string, column: string, entry: ReleaseDiffSide) =>
    `[${entry.status}](${cellHref(caseId, column)})${entry.outcome ? ` ${code(cellText(entry.outcome))}` : ''}`;
  for (const kind of RELEASE_DIFF_KINDS) {
    const rows = diff.rows.filter((row) => row.kind === kind);
    if (rows.length === 0) continue;
    const [caseHead, before, after] = t.releaseDiffHead;
    lines.push(
      `### ${t.releaseDiffKinds[kind]} (${rows.length})`,
      '',
      `| ${caseHead} | ${before} (${diff.from.release}) | ${after} (${diff.to.release}) |`,
      '|---|---|---|',
    );
    for (const row of rows)
      lines.push(
        `| ${link(row.case)}${triageOf(row.case)} | ${side(row.case, diff.from.column, row.from)} | ${side(row.case, diff.to.column, row.to)} |`,
      );
    lines.push('');
  }
  if (diff.unknown.length) lines.push(t.releaseDiffUnknown(diff.unknown.length), '');
  return lines;
}

export function renderMatrixMarkdown(run: MatrixRun, root = '..', fuzz?: FuzzSummary): string {
  const cases = new Map(run.cases.map((item) => [item.id, item]));
  const label = (id: string) => run.columns.find((column) => column.id === id)?.label ?? id;
  const link = (id: string) => {
    const item: MatrixCase | undefined = cases.get(id);
    return item ? `[${code(id)}](${root}/${item.file}#L${item.line})` : code(id);
  };
  const list = (cells: readonly MatrixCell[], withDiff: boolean) => {
    const lines: string[] = [];
    for (const cell of cells.slice(0, MARKDOWN_LIST_LIMIT)) {
      lines.push(`- ${link(cell.case)} on **${cellText(label(cell.column))}**: ${cellText(cell.reason ?? '')}`);
      if (withDiff && cell.diff)
        lines.push(
          '',
          '  <details><summary>diff</summary>',
          '',
          fence(cell.diff).replace(/^/gm, '  '),
          '',
          '  </details>',
          '',
        );
    }
    if (cells.length > MARKDOWN_LIST_LIMIT) lines.push(`- ${t.more(cells.length - MARKDOWN_LIST_LIMIT)}`);
    return lines;
  };

  const failures = run.cells.filter((cell) => cell.status === 'fail');
  const broken = run.columns.filter((column) => column.infraError);
  const infra = run.cells.filter(
    (cell) => cell.status === 'infra-error' && !broken.some((column) => column.id === cell.column),
  );
  const lines: string[] = ['# Compatibility matrix', '', `**${t.verdict(run)}**`, '', t.runLine(run), ''];
  if (run.run.columnsLeftOut) lines.push(`> ${t.limited(run.run.columnsLeftOut)}`, '');
  for (const column of broken)
    lines.push(`> ${t.columnDidNotRun(cellText(column.label), cellText(column.infraError ?? ''))}`, '');
  const triageOf = (id: string) => {
    const triage = cases.get(id)?.triage;
    return triage ? ` (${t.triageMark} [${cellText(triage.note)}](${triage.link}))` : '';
  };
  if (run.releaseDiff) lines.push(...releaseDiffLines(run.releaseDiff, link, triageOf));
  const noDiff = sameReleaseNote(run);
  if (noDiff) lines.push(`> ${noDiff}`, '');
  if (run.workerdDiff) lines.push(...releaseDiffLines(run.workerdDiff, link, triageOf));

  lines.push(`## ${t.sinceTitle}`, '');
  const since = run.since;
  if (!since?.previous) lines.push(t.noPreviousRun, '');
  else {
    lines.push(t.comparedWith(since.previous.date, since.previous.commit, since.previous.snapshot), '');
    if (since.changes.length === 0) lines.push(t.nothingChanged, '');
    const byCase = changesByCase(since.changes, label);
    for (const entry of byCase.slice(0, MARKDOWN_LIST_LIMIT))
      lines.push(`- ${link(entry.case)}: ${cellText(entry.text)}`);
    if (byCase.length > MARKDOWN_LIST_LIMIT) lines.push(`- ${t.more(byCase.length - MARKDOWN_LIST_LIMIT)}`);
    if (byCase.length) lines.push('');
    const flakySince = changesByCase(since.flaky ?? [], label);
    if (flakySince.length)
      lines.push(
        t.flakySince(flakySince.length),
        '',
        ...flakySince.slice(0, MARKDOWN_LIST_LIMIT).map((entry) => `- ${link(entry.case)}: ${cellText(entry.text)}`),
        '',
      );
    if (since.newCases.length) {
      const more = since.newCases.length - MARKDOWN_LIST_LIMIT;
      const shown = since.newCases.slice(0, MARKDOWN_LIST_LIMIT).map(link).join(', ');
      lines.push(`${t.newCases(since.newCases.length)} ${shown}${more > 0 ? ` ${t.more(more)}` : ''}`, '');
    }
    if (since.removedCases.length)
      lines.push(`${t.removedCases(since.removedCases.length)} ${since.removedCases.map(code).join(', ')}`, '');
  }

  lines.push(...fuzzMarkdown(fuzz));
  lines.push(
    '## Columns',
    '',
    '| column | versions | pass | fail | skip | unsupported | infra-error |',
    '|---|---|---:|---:|---:|---:|---:|',
  );
  for (const column of run.columns) {
    const summary = run.summary.columns.find((entry) => entry.column === column.id);
    if (!summary) continue;
    const mark = summary.green ? '✓' : summary.counts.fail ? '✗' : '⚠';
    const { counts } = summary;
    const fail = summary.unexpectedPass ? `${counts.fail} (${summary.unexpectedPass} stale skip)` : String(counts.fail);
    lines.push(
      `| ${mark} **${cellText(column.label)}** | ${cellText([versionsLine(column.versions), columnHeadNote(column)].filter(Boolean).join(' · '))} | ${counts.pass} | ${fail} | ${counts.skip} | ${counts.unsupported} | ${counts['infra-error']} |`,
    );
  }
  lines.push('', `## ${t.failuresTitle(failures.length)}`, '', ...(failures.length ? list(failures, true) : [t.none]));
  const flaky = run.cells.filter(isFlaky);
  if (flaky.length)
    lines.push(
      '',
      `## ${t.flakyTitle(flaky.length)}`,
      '',
      ...list(
        flaky.map((cell) => ({ ...cell, reason: `${t.firstAttempt}: ${cell.rerun?.reason ?? ''}` })),
        false,
      ),
    );
  lines.push('', `## ${t.infraTitle(infra.length + broken.length)}`, '');
  if (!infra.length && !broken.length) lines.push(t.none);
  for (const column of broken)
    lines.push(`- ${t.columnDidNotRun(cellText(column.label), cellText(column.infraError ?? ''))}`);
  lines.push(...list(infra, false), '');
  return lines.join('\n');
}
