/**
 * The report's own texts (matrix.md, the page, and what reading or writing its files can fail with), in one place. The statuses' labels, symbols
 * and meanings are the harness's (../texts.ts), since the commands print them too.
 */
import type { CellChange, ColumnVersions, MatrixColumn, MatrixRun, ReleaseDiff, ReleaseDiffKind } from './model.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** ` (commit 3822a5fae1dd)` after a run's date, or nothing when the commit is unknown. */
const ofCommit = (commit: string | null) => (commit ? ` (commit ${commit.slice(0, 12)})` : '');

/** `codemode 0.5.6 · workerd 1.20260426.1 · wrangler 4.86.0 · compat 2025-06-01 · flags nodejs_compat`. */
export function versionsLine(versions: ColumnVersions): string {
  const parts: string[] = [];
  if (versions.executor) parts.push(`executor ${versions.executor}`);
  if (versions.codemode) parts.push(`codemode ${versions.codemode}`);
  if (versions.workerd) parts.push(`workerd ${versions.workerd}`);
  if (versions.wrangler) parts.push(`wrangler ${versions.wrangler}`);
  if (versions.compatibilityDate) parts.push(`compat ${versions.compatibilityDate}`);
  if (versions.compatibilityFlags.length) parts.push(`flags ${versions.compatibilityFlags.join(', ')}`);
  return parts.join(' · ');
}

/**
 * A run's changes, one entry per case: its columns grouped by the change they share, e.g.
 * `0.2.2, 0.3.8: unsupported → skip; latest (0.5.6): pass → fail`. The first changed column
 * comes first, in report order.
 */
export function changesByCase(
  changes: readonly CellChange[],
  label: (column: string) => string,
): { case: string; column: string; text: string }[] {
  const byCase = new Map<string, Map<string, string[]>>();
  for (const change of changes) {
    const groups = byCase.get(change.case) ?? new Map<string, string[]>();
    byCase.set(change.case, groups);
    const what = reportTexts.change(change);
    groups.set(what, [...(groups.get(what) ?? []), change.column]);
  }
  return [...byCase].map(([caseId, groups]) => ({
    case: caseId,
    column: [...groups.values()][0]?.[0] ?? '',
    text: [...groups].map(([what, columns]) => `${columns.map(label).join(', ')}: ${what}`).join('; '),
  }));
}

/**
 * What a resolved column's head says once for the whole column: when its release was published,
 * whether the peer range admits it, and that its cells are another column's when it ran the same
 * release. Empty for the other columns.
 */
export function columnHeadNote(column: MatrixColumn): string {
  const parts: string[] = [];
  const release = column.release;
  if (release) {
    parts.push(
      `${release.chosenBy === 'option' ? 'named with an option' : "the npm registry's newest"}, published ${release.published ? release.published.slice(0, 10) : 'on an unknown date'}`,
    );
    if (!release.inPeerRange) parts.push(`outside the supported range ${release.peerRange}`);
  }
  if (column.sameAs) parts.push(`same release as ${column.sameAs}: its results, not run twice`);
  return parts.join(' · ');
}

/** Why there is no release diff where a resolved column ran another column's release; null otherwise. */
export function sameReleaseNote(run: MatrixRun): string | null {
  if (run.releaseDiff) return null;
  const same = run.columns.find((column) => column.sameAs !== undefined);
  return same?.sameAs ? reportTexts.releaseDiffSameRelease(same.id, same.sameAs, same.versions.codemode) : null;
}

export const reportTexts = {
  fuzzTitle: 'Fuzzing',
  fuzzLine: (
    seed: number,
    column: string,
    ran: number,
    asked: number,
    differences: number,
    known: number,
    flaky: number,
  ) =>
    `Seed ${seed}, ours against ${column}: ${plural(ran, 'program')} run (of ${asked}), ${plural(differences, 'difference')}: ` +
    `${known} documented, ${flaky} flaky, ${differences - known - flaky} new.`,
  fuzzNoDrafts: 'No new draft.',
  fuzzDrafts: (n: number) => `${plural(n, 'new draft')}, each a case to triage (docs/fuzzing.md):`,
  fuzzDraft: (signature: string, index: number) => `differs in ${signature}, first at program ${index}`,
  fuzzBadFile: (file: string, why: string) => `${file}: not a fuzz summary (${why})`,
  verdict(run: MatrixRun): string {
    if (run.summary.green) return 'Green: no failure and no infra-error in any column.';
    const fail = run.summary.columns.reduce((sum, column) => sum + column.counts.fail, 0);
    const infra = run.summary.columns.reduce((sum, column) => sum + column.counts['infra-error'], 0);
    const parts = [fail ? plural(fail, 'failure') : '', infra ? `${plural(infra, 'infra-error')} (not results)` : ''];
    return `Not green: ${parts.filter(Boolean).join(', ') || 'a column did not run'}.`;
  },
  runLine(run: MatrixRun): string {
    const commit = run.run.commit ? `commit ${run.run.commit.slice(0, 12)}` : 'commit unknown';
    return [
      `Run ${run.run.date}`,
      `${commit}${run.run.dirty ? ' (with uncommitted changes)' : ''}`,
      `${Math.round(run.run.durationMs / 1000)} s`,
      plural(run.cases.length, 'case'),
      plural(run.columns.length, 'column'),
      `judged by docs/interpreting.md version ${run.run.interpreting}`,
    ].join(' · ');
  },
  limited: (leftOut: readonly string[]) =>
    `This run was limited with --columns: ${leftOut.join(', ')} did not run, so their cells are missing, not passing.`,
  releaseDiffTitle: (diff: ReleaseDiff) =>
    `${diff.of === 'workerd' ? 'workerd diff' : 'Release diff'}: ${diff.from.release} → ${diff.to.release}`,
  releaseDiffIntro: (diff: ReleaseDiff) =>
    `Every case whose status or outcome differs between ${diff.from.column === diff.from.release ? diff.from.release : `${diff.from.column} (${diff.from.release})`} and ${diff.to.column} (${diff.to.release}), in this run.`,
  releaseDiffNone: (diff: ReleaseDiff) => `No case differs between ${diff.from.release} and ${diff.to.release}.`,
  releaseDiffUnknown: (n: number) =>
    `${plural(n, 'case')} left out: an infra-error on either side, so unknown rather than unchanged.`,
  /** Why a run with the newest column has no release diff, said where the diff would be. */
  releaseDiffSameRelease: (column: string, sameAs: string, release: string | null) =>
    `No release diff: ${column} is the same release as ${sameAs}${release ? ` (${release})` : ''}, so its cells are ${sameAs}'s, not run twice, and there is nothing to compare.`,
  releaseDiffPlainTitle: 'Release diff',
  releaseDiffKinds: {
    'newly-failing': 'Newly failing',
    'newly-passing': 'Newly passing',
    'changed-outcome': 'Changed outcome',
  } satisfies Record<ReleaseDiffKind, string>,
  releaseDiffHead: ['case', 'before', 'after'],
  noOutcome: '(not run)',
  sinceTitle: 'Since the previous run',
  noPreviousRun: 'No earlier run is recorded in this directory, so there is nothing to compare with.',
  comparedWith: (date: string, commit: string | null, snapshot = false) =>
    snapshot
      ? `No earlier run is recorded in this directory, so this one is compared with the committed snapshot in reports/: the run of ${date}${ofCommit(commit)}.`
      : `Compared with the run of ${date}${ofCommit(commit)}.`,
  nothingChanged: 'No cell changed status.',
  flakySince: (n: number) =>
    `Flaky (${n}): changed status although the commit, the checkout and the release are the previous run's, so not counted as changes:`,
  moreChanges: '{n} more cases changed',
  change: (change: CellChange) =>
    `${change.from} → ${change.to}${change.releases ? ` (${change.releases.from ?? '?'} → ${change.releases.to ?? '?'})` : ''}`,
  newCases: (n: number) => `New ${n === 1 ? 'case' : 'cases'} (${n}):`,
  /** The fold under the first new (or removed) case ids. */
  moreCaseIds: '{n} more',
  removedCases: (n: number) => `Removed ${n === 1 ? 'case' : 'cases'} (${n}):`,
  flakyTitle: (n: number) => `Flaky (${n}): failed once, passed on the rerun, so not failures`,
  flakyMark: 'flaky',
  trendTitle: 'History',
  noTrend: 'Fewer than two runs are recorded in history/, so there is no trend yet.',
  trendFromSnapshot: (n: number) =>
    `No earlier run is recorded in this directory, so the history starts with the committed snapshot's ${plural(n, 'run')} in reports/history/.`,
  triageMark: 'triage:',
  summaryTitle: 'Columns',
  summaryColumn: 'column',
  summaryChanged: 'changed since the previous run',
  columnWide: 'not run on {n} cases: {reason}',
  firstAttempt: 'first attempt',
  failuresHeading: 'Failures',
  failuresTitle: (n: number) => `Failures (${n})`,
  infraTitle: (n: number) => `Infra-errors (${n}), not results`,
  none: 'None.',
  more: (n: number) => `… and ${n} more (see index.html or matrix.json)`,
  columnDidNotRun: (label: string, why: string) => `column **${label}** did not run: ${why}`,
  earlierTitle: 'Earlier changes',
  noEarlier: 'No earlier run in this directory changed a cell.',
  earlierRun: (date: string, commit: string | null, previous: string) =>
    `Run ${date}${ofCommit(commit)}, against the run of ${previous}`,
  earlierLine: (caseId: string, changes: string) => `${caseId}: ${changes}`,
  noMatch: 'No case matches these filters.',
  shown: 'showing {shown} of {total} cases',
  newMark: 'new',
  upstreamNote: 'differs from upstream on purpose:',
  failsAsSaid: '— fails as the skip says',
  boundariesTitle: 'Release boundaries',
  skipNote: 'skipped on {columns}:',
  unsupportedNote: 'not run on {columns}:',
  judgedBy: {
    upstream: 'upstream.expect: the case differs from upstream on purpose',
    skip: 'the expect of its skip entry: this column fails the way the skip says',
  },
  legendExtra: [
    {
      mark: '✓ ≠',
      className: 's-pass',
      meaning: 'Passed upstream.expect: the case differs from upstream on purpose, and the reason is under the case.',
    },
    {
      mark: '– skip ✓',
      className: 's-skip',
      meaning: 'Skipped by a boundary, and failed exactly the way the skip entry says it does.',
    },
    {
      mark: '✗ stale skip',
      className: 's-fail stale',
      meaning: 'A skipped cell passed: the skip no longer holds. Remove it, or move the boundary.',
    },
    { mark: 'new', className: 'new-mark', meaning: 'A case the previous run did not have.' },
  ],

  historyNotJson: (source: string, why: string) => `${source}: not JSON (${why})`,
  notHistoryRecord: (source: string) =>
    `${source}: not a history record (expected schemaVersion 1 with date, columns and cases)`,
  badHistoryStatuses: (source: string, caseId: string, letters: unknown, columns: number) =>
    `${source}: case "${caseId}" has statuses "${String(letters)}", expected ${columns} of p f s u i -`,
  matrixInvalid: (problems: readonly string[]) =>
    `matrix.json does not match schema/matrix.schema.json:\n${problems.join('\n')}`,
  noChromium: (path: string) =>
    `Chromium is not installed at ${path}: run \`apt-get install -y chromium\` (or set CHROMIUM_PATH)`,
  notPng: 'not a PNG file',
  pngWithoutEnd: 'a PNG file without its IEND chunk',
  pictureWritten: (png: string) => `wrote ${png}`,
  pictureNotRefreshed: (png: string, why: string) =>
    `${png} was not refreshed (${why}); run \`npx tsx harness/report/browser.ts\` once Chromium is there`,
} as const;
