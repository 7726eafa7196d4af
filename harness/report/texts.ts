/**
 * Every text the matrix composes (cell reasons, progress lines, page labels), in one place so a
 * reword is one deliberate edit and tests can name the exact string.
 */
import type { CellStatus, ProbeNote } from './model.js';

export const STALE_SKIP_PREFIX = 'unexpected pass: skip reason is stale';

export const texts = {
  /** A skipped cell whose probe passed. */
  staleSkip: (skipReason: string) => `${STALE_SKIP_PREFIX} (skip reason: ${skipReason})`,
  /** Only reachable with a case the case schema should have refused. */
  missingReason: 'reference: false, and the case gives no reason',
  /** A cell whose column never came up. */
  columnUnavailable: (columnReason: string) => `column unavailable: ${columnReason}`,
  /** A case without `expect` and nothing that ran it to compare with. */
  nothingDecides: 'no expect, and no other column produced an outcome to compare with: nothing decides this case',
  /** A case without `expect` whose comparison partner broke. */
  partnerBroke: (partner: string) => `no expect, and ${partner} could not produce an outcome to compare with`,
  /** A failing expectation check. */
  expectationFailed: (fields: readonly string[]) =>
    fields.length ? `outcome differs from expect in ${fields.join(', ')}` : 'outcome differs from expect',
  /** A failing side-vs-side comparison. */
  disagrees: (others: readonly string[], fields: readonly string[]) =>
    `outcome differs from ${others.join(', ')}${fields.length ? ` in ${fields.join(', ')}` : ''}`,
  /** After a probe broke the harness, later probes on that column are not made. */
  probesStopped: (reason: string) => `a probe broke the harness (${reason}); later probes on this column were not run`,
  /** A case run that did not finish in time. */
  runTimedOut: (ms: number) => `the harness got no outcome within ${ms} ms`,
  probeNote: {
    'still-fails': 'probed: still does not pass, so the skip holds',
    'not-probed-unsafe': 'not probed: the reason says the case cannot run safely here',
    'not-run': 'not probed: the column could not run it',
  } satisfies Record<ProbeNote, string>,
  statusLabel: {
    pass: 'pass',
    fail: 'fail',
    skip: 'skip',
    unsupported: 'unsupported',
    'infra-error': 'infra-error',
  } satisfies Record<CellStatus, string>,
  /** One symbol per status, used by the page, the markdown and the progress line. */
  statusSymbol: {
    pass: '✓',
    fail: '✗',
    skip: '–',
    unsupported: '∅',
    'infra-error': '⚠',
  } satisfies Record<CellStatus, string>,
  /** What each status means, for the page's legend and docs. */
  statusMeaning: {
    pass: 'The column ran the case and its outcome met the expectation (or, without expect, agreed with the other side).',
    fail: 'The column ran the case and its outcome did not meet it; the diff says how. A dashed border marks a stale skip: a case skipped on this column that passed when probed.',
    skip: 'skipOn names this column; the reason comes from the case. Probed when safe, to catch reasons that went stale.',
    unsupported: 'reference: false: the reference cannot run this case; the reason comes from the case.',
    'infra-error':
      'The harness broke (e.g. wrangler dev did not start). Not a result: the column’s behaviour is unknown.',
  } satisfies Record<CellStatus, string>,
  staleMark: 'stale skip',
  columnDidNotRun: 'column did not run',
  catalogueHeader:
    '<!-- Generated from cases/ by `npx tsx harness/cli/catalogue.ts`. Do not edit by hand: a test fails when this file is out of step with cases/. -->',
  catalogueOutOfStep:
    'reports/catalogue.md is out of step with cases/. Regenerate it with `npx tsx harness/cli/catalogue.ts` and commit the result.',
  progress: {
    opening: (column: string) => `[${column}] opening the column…`,
    columnStart: (column: string, total: number) => `[${column}] running ${total} cases`,
    columnLine: (column: string, done: number, total: number, elapsedMs: number, failures: number) =>
      `[${column}] ${done}/${total} · ${formatSeconds(elapsedMs)}${failures ? ` · ${failures} failed` : ''}`,
    failure: (column: string, file: string, caseId: string, reason: string) =>
      `[${column}] ✗ ${file} › ${caseId}: ${reason}`,
    infra: (column: string, reason: string) => `[${column}] ⚠ infra-error: ${reason}`,
    columnDone: (column: string, counts: string, elapsedMs: number) =>
      `[${column}] done in ${formatSeconds(elapsedMs)}: ${counts}`,
    columnCounts: (ran: number, probed: number, failed: number, infra: number) =>
      `${ran} ran, ${probed} probed for stale skips, ${failed} failed, ${infra} infra-error`,
    deferred: 'ours, compared with the reference columns (cases without expect):',
    summaryLine: (label: string, counts: string) => `  ${label.padEnd(18)} ${counts}`,
    interrupted: (signal: string) => `${signal}: stopping every column that is still running…`,
    written: (dir: string) => `reports written to ${dir}`,
    verdict: (green: boolean) =>
      green ? 'matrix is green' : 'matrix is NOT green (see failures and infra-errors above)',
  },
} as const;

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
