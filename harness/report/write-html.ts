/**
 * `index.html`: one self-contained static page. The template, stylesheet and script in `page/`
 * are inlined with the run and every text the page shows, so it opens from the file system with
 * no server and no network.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FuzzSummary } from '../fuzz/run.js';
import { texts } from '../texts.js';
import { fuzzHtml } from './fuzz-section.js';
import type { HistoryEntry, HistoryRecord } from './history.js';
import { CELL_STATUSES, isFlaky, type MatrixRun, RELEASE_DIFF_KINDS, type ReleaseDiff } from './model.js';
import { changesByCase, columnHeadNote, sameReleaseNote, reportTexts as t, versionsLine } from './texts.js';
import { caseStrips, trendSvg } from './trend.js';

const PAGE_DIR = join(import.meta.dirname, 'page');
/** Cases with changes listed at the top before the rest fold away. */
const CHANGES_SHOWN = 8;

/** JSON that is safe inside a `<script>` element: no `</script>`, no `<!--`. */

/** The page's words for one diff (the release diff, or the workerd diff), or null when the run has none. */
function diffUi(diff: ReleaseDiff | undefined) {
  if (!diff) return null;
  return {
    title: t.releaseDiffTitle(diff),
    intro: t.releaseDiffIntro(diff),
    none: t.releaseDiffNone(diff),
    unknown: diff.unknown.length ? t.releaseDiffUnknown(diff.unknown.length) : null,
    kinds: RELEASE_DIFF_KINDS.map((kind) => ({ kind, title: t.releaseDiffKinds[kind] })),
    head: [
      t.releaseDiffHead[0],
      `${t.releaseDiffHead[1]} (${diff.from.release})`,
      `${t.releaseDiffHead[2]} (${diff.to.release})`,
    ],
  };
}

function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Substitutes every `{{NAME}}` once, in one pass, so inserted text is never re-scanned for placeholders. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z]+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`page template: no value for ${whole}`);
    return value;
  });
}

/**
 * `earlier`: earlier runs that changed something, newest first. `root`: the repository, relative to
 * the page. `records`: the history the trend draws, of which the first `fromSnapshot` are the
 * committed snapshot's.
 */
export function renderIndexHtml(
  run: MatrixRun,
  earlier: readonly HistoryEntry[] = [],
  root = '..',
  records: readonly HistoryRecord[] = [],
  fromSnapshot = 0,
  fuzz?: FuzzSummary,
): string {
  const read = (name: string) => readFileSync(join(PAGE_DIR, name), 'utf8');
  const label = (id: string) => run.columns.find((column) => column.id === id)?.label ?? id;
  const since = run.since;
  // The report's fixed texts cross as they are (JSON drops the functions); those that need the run are composed here.
  const ui = {
    ...t,
    statuses: CELL_STATUSES,
    labels: texts.statusLabel,
    symbols: texts.statusSymbol,
    staleMark: texts.staleMark,
    upstreamMark: texts.upstreamMark,
    flakyTitle: t.flakyTitle(run.cells.filter(isFlaky).length),
    verdict: t.verdict(run),
    runLine: t.runLine(run),
    limited: run.run.columnsLeftOut ? t.limited(run.run.columnsLeftOut) : null,
    comparedWith: since?.previous
      ? t.comparedWith(since.previous.date, since.previous.commit, since.previous.snapshot)
      : '',
    changes: changesByCase(since?.changes ?? [], label),
    flakySince: since?.flaky?.length ? t.flakySince(since.flaky.length) : null,
    flakyChanges: changesByCase(since?.flaky ?? [], label),
    releaseDiff: diffUi(run.releaseDiff),
    workerdDiff: diffUi(run.workerdDiff),
    releaseDiffMissing: sameReleaseNote(run),
    releaseDiffPlainTitle: t.releaseDiffPlainTitle,
    changesShown: CHANGES_SHOWN,
    newCases: t.newCases(since?.newCases.length ?? 0),
    removedCases: t.removedCases(since?.removedCases.length ?? 0),
    legend: [
      ...CELL_STATUSES.map((status) => ({
        mark: `${texts.statusSymbol[status]} ${texts.statusLabel[status]}`,
        className: `s-${status}`,
        meaning: texts.statusMeaning[status],
      })),
      ...t.legendExtra,
    ],
  };
  const data = {
    root,
    run: {
      ...run,
      columns: run.columns.map((column) => ({
        ...column,
        versionsLine: versionsLine(column.versions),
        headNote: columnHeadNote(column),
      })),
    },
    earlier: earlier.map((entry) => ({
      title: t.earlierRun(entry.date, entry.commit, entry.changes.previous?.date ?? '?'),
      lines: changesByCase(entry.changes.changes, label).map((change) => t.earlierLine(change.case, change.text)),
    })),
    ui,
    history: caseStrips(records),
  };
  const script = read('page.js');
  if (/<\/script/i.test(script)) throw new Error('page/page.js must not contain "</script"');
  return fill(read('template.html'), {
    TITLE: escapeHtml(`Compatibility matrix · ${run.run.date}`),
    STYLE: read('page.css'),
    SCRIPT: script,
    DATA: scriptSafeJson(data),
    FUZZ: fuzzHtml(fuzz),
    TREND: trend(records, run, fromSnapshot),
  });
}

/** The charts, after a line saying where their runs come from when the first are the snapshot's. */
function trend(records: readonly HistoryRecord[], run: MatrixRun, fromSnapshot: number): string {
  const charts = trendSvg(records, run.columns);
  if (!charts) return `<p class="empty-note">${escapeHtml(t.noTrend)}</p>`;
  return fromSnapshot > 0
    ? `<p class="trend-note">${escapeHtml(t.trendFromSnapshot(fromSnapshot))}</p>${charts}`
    : charts;
}
