/**
 * The catalogue as tests, a thin adapter over the engine: one test per case on one column, named
 * `<file> › <id>`. A skipped cell is a test too, since the engine still runs it: it fails when the
 * case passes there (a stale skip) or, when its skip entry says how the column fails, when it fails
 * otherwise. Only an unsupported cell, which nothing may run, is a skipped test, with its reason in
 * the title. One file per column, so vitest runs two columns at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ColumnId, describeColumn } from '../columns.js';
import { cellDeadlineMs, Engine } from '../engine.js';
import { settleCell } from '../judge.js';
import { caseTitle, loadCatalogue } from '../load-cases.js';
import { longFirst } from '../long-cases.js';
import { type MatrixCell, summarize } from '../report/model.js';
import { texts } from '../texts.js';

/** A `wrangler dev` cold start on a busy two-core machine, with its port retries. */
const OPEN_TIMEOUT_MS = 10 * 60_000;
/** Room beyond the engine's own deadline, so the engine, not vitest, says a case got no outcome. */
const TEST_MARGIN_MS = 30_000;

export function catalogueSuite(column: ColumnId): void {
  const { cases, boundaries } = loadCatalogue();
  const engine = new Engine(boundaries);
  const cells: MatrixCell[] = [];
  const unsupported: MatrixCell[] = [];
  let ran = 0;

  // Concurrent, so a long case waits beside the next ones instead of holding up the file; the
  // engine's lane still starts them in order, and runs a case that involves time alone (harness/lanes.ts,
  // harness/engine.ts).
  describe.concurrent(`catalogue on ${column}`, () => {
    beforeAll(async () => {
      const failure = await engine.open(column);
      if (failure !== undefined) throw new Error(texts.suite.didNotOpen(column, failure));
    }, OPEN_TIMEOUT_MS);

    afterAll(async () => {
      try {
        // Unsupported cells count only in a whole run: a filtered one (-t) did not pass them by.
        const whole = ran === cases.length - unsupported.length;
        if (ran > 0) console.log(summaryLine(column, whole ? [...cells, ...unsupported] : cells));
      } finally {
        await engine.closeAll(); // Nothing is left running, whatever failed.
      }
    }, OPEN_TIMEOUT_MS);

    // The cases known to wait long start first, so their waits overlap the rest (long-cases.ts).
    for (const item of longFirst(cases, engine.knownLong)) {
      const plan = engine.plan(item, column);
      const title = caseTitle(item);
      if (plan.kind === 'unsupported') {
        unsupported.push(settleCell(item, column, plan, undefined));
        it.skip(texts.suite.unsupportedTitle(title, plan.reason), () => {});
        continue;
      }
      const named = plan.kind === 'skip' ? texts.suite.skipTitle(title, plan.label) : title;
      it(named, { timeout: cellDeadlineMs(item) + TEST_MARGIN_MS }, async () => {
        const { cell } = await engine.cell(item, column);
        cells.push(cell);
        ran += 1;
        if (cell.status === 'fail' || cell.status === 'infra-error') expect.fail(texts.suite.cellFailed(cell));
      });
    }
  });
}

function summaryLine(column: ColumnId, cells: readonly MatrixCell[]): string {
  const described = describeColumn(column);
  const { counts, unexpectedPass } = summarize([described], cells).columns[0]!; // One column in, one out.
  return texts.suite.summary(described.label, texts.counts(counts, unexpectedPass));
}
