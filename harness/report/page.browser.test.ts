/**
 * The report page in a real browser: index.html written from the fixture into a temporary
 * directory and opened from the file system in headless Chromium, as a nightly reader opens it,
 * at a desktop width and at 800 px.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_DIFF, FIXTURE_REMOTE_BREAK, fixtureRun } from '../test-support/report-run.js';
import { launchChromium } from './browser.js';
import { CELL_STATUSES, cellKey, type MatrixCell, type MatrixColumn, type MatrixRun, summarize } from './model.js';
import { releaseDiff } from './release-diff.js';
import { renderIndexHtml } from './write-html.js';
import { writeReports } from './write-reports.js';

/** A reason that would end the data script early if the writer did not escape it. */
const HOSTILE_REASON = 'engine said </script><script>window.__injected = true</script> & <b>bold</b>';

const dir = mkdtempSync(join(tmpdir(), 'matrix-page-'));
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let pageUrl: string;

/** The first run has no error-thrown-string case yet, so the second run adds it. */
function withoutCase(run: MatrixRun, id: string): MatrixRun {
  return {
    ...run,
    cases: run.cases.filter((item) => item.id !== id),
    cells: run.cells.filter((cell) => cell.case !== id),
  };
}

beforeAll(async () => {
  writeReports(
    withoutCase(
      fixtureRun({ date: '2026-11-28T03:00:00.000Z', outcomes: { 'result-number@latest': { result: 'ok' } } }),
      'error-thrown-string',
    ),
    dir,
  );
  const second = fixtureRun({
    date: '2026-11-29T03:00:00.000Z',
    commit: 'b0d5e1c2a3f4b0d5e1c2a3f4b0d5e1c2a3f4b0d5', // another commit: the changes are real, not flaky
    outcomes: { 'result-number@latest': { result: 'other' } },
  });
  const hostile = second.cells.map((cell) =>
    cell.case === 'result-number' && cell.column === 'latest' ? { ...cell, reason: HOSTILE_REASON } : cell,
  );
  writeReports({ ...second, cells: hostile, run: { ...second.run, columnsLeftOut: ['0.4.1', '0.4.4'] } }, dir);
  pageUrl = pathToFileURL(join(dir, 'index.html')).href;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // Nothing may leave the machine: the page is self-contained.
  await page.route(/^(?!file:)/, (route) => {
    pageErrors.push(`network request to ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(pageUrl);
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

const visibleCaseIds = (p: Page) =>
  p.$$eval('tr.case-row', (rows) =>
    rows.filter((row) => !(row as HTMLElement).hidden).map((row) => row.id.replace(/^case-/, '')),
  );
const cell = (caseId: string, column: string) => page.locator(`a.cell[data-case="${caseId}"][data-column="${column}"]`);

describe('index.html in Chromium', () => {
  it('puts the verdict, the banners, what changed, the legend and the failures above the grid', async () => {
    const top = (selector: string) => page.locator(selector).evaluate((node) => node.getBoundingClientRect().top);
    const order = await Promise.all(
      ['#verdict', '#banners', '#since', '.legend', '#boundaries', '#failures', '#grid'].map(top),
    );
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(await page.textContent('#verdict')).toBe('✗ Not green: 3 failures, 6 infra-errors (not results).');
    expect(await page.textContent('#run-meta')).toContain('Run 2026-11-29T03:00:00.000Z · commit b0d5e1c2a3f4');
    expect(await page.$$eval('#banners .banner', (nodes) => nodes.map((node) => node.textContent))).toEqual([
      'This run was limited with --columns: 0.4.1, 0.4.4 did not run, so their cells are missing, not passing.',
      `⚠ ours-remote: ${FIXTURE_REMOTE_BREAK}`,
    ]);
    expect(pageErrors).toEqual([]);
  });

  it('says what changed since the previous run, naming it, and flags the new case in its row', async () => {
    const since = await page.textContent('#since');
    expect(since).toContain('Compared with the run of 2026-11-28T03:00:00.000Z (commit 3822a5fae1dd).');
    expect(since).toContain('result-number: latest (0.5.6): pass → fail');
    expect(since).toContain('New case (1): error-thrown-string');
    expect(await page.textContent('#case-error-thrown-string .new-mark')).toBe('new');
    expect(await page.locator('#case-result-number .new-mark').count()).toBe(0);
  });

  it('draws the history as inline SVG, one chart per column, and a strip of recent runs in each case row', async () => {
    const charts = await page
      .locator('#trend figure.trend')
      .evaluateAll((figures) =>
        figures.map((figure) => [figure.getAttribute('data-column'), figure.querySelectorAll('polyline').length]),
      );
    expect(charts).toEqual(['ours', 'ours-remote', '0.2.2', '0.3.8', 'latest'].map((column) => [column, 4]));
    // Both runs failed result-number on 0.3.8: its strip shows two failing runs, oldest first, dated.
    const strip = page.locator('#case-result-number .strip .strip-cell');
    expect(
      await strip.evaluateAll((cells) => cells.map((cell) => [cell.className, cell.getAttribute('title')])),
    ).toEqual([
      ['strip-cell s-fail', '2026-11-28T03:00:00.000Z: fail'],
      ['strip-cell s-fail', '2026-11-29T03:00:00.000Z: fail'],
    ]);
    // The first run had no error-thrown-string case.
    expect(await page.locator('#case-error-thrown-string .strip-cell').first().getAttribute('class')).toBe(
      'strip-cell s-none',
    );
  });

  it('folds a long list of changes after its first entries', async () => {
    const many: MatrixRun = {
      ...fixtureRun(),
      since: {
        previous: { date: '2026-11-28T03:00:00.000Z', commit: null },
        changes: Array.from({ length: 12 }, (_, i) => ({
          case: `c${i}`,
          column: 'ours',
          from: 'pass' as const,
          to: 'fail' as const,
        })),
        newCases: [],
        removedCases: [],
      },
    };
    const folded = mkdtempSync(join(tmpdir(), 'matrix-page-folded-'));
    try {
      writeFileSync(join(folded, 'index.html'), renderIndexHtml(many));
      const other = await browser.newPage();
      await other.goto(pathToFileURL(join(folded, 'index.html')).href);
      expect(await other.locator('#since > ul.changes > li').count()).toBe(8);
      expect(await other.textContent('#since details.more summary')).toBe('4 more cases changed');
      expect(await other.locator('#since details.more li').first().isVisible()).toBe(false);
      await other.click('#since details.more summary');
      expect(await other.locator('#since details.more li').first().isVisible()).toBe(true);
      await other.close();
    } finally {
      rmSync(folded, { recursive: true, force: true });
    }
  });

  it('shows why a cell is skipped, unsupported or judged by upstream in the row itself, without hovering', async () => {
    expect(await page.textContent('#case-binary-arg .notes')).toBe(
      '– skipped on 0.2.2: before codec (0.3.7) — fails as the skip says',
    );
    expect(await page.textContent('#case-timeout-spin .notes')).toBe(
      '∅ not run on 0.2.2, 0.3.8, latest (0.5.6): unsafe on the reference: a spin wedges wrangler dev',
    );
    expect(await page.textContent('#case-error-thrown-string .notes')).toBe(
      '≠ differs from upstream on purpose: Ours reports the string; upstream reports success.',
    );
    expect(await page.textContent('#boundaries')).toContain('codec 0.3.70.3.7 brought the binary codec.');
  });

  it('marks each status distinctly in its cell', async () => {
    expect(await cell('result-number', '0.3.8').textContent()).toBe('✗ fail');
    expect(await cell('binary-result', '0.2.2').textContent()).toBe('✗ stale skip');
    expect(await cell('binary-result', '0.2.2').getAttribute('class')).toBe('cell s-fail stale');
    expect(await cell('binary-arg', '0.2.2').textContent()).toBe('– skip ✓');
    expect(await cell('connector-call', '0.3.8').textContent()).toBe('– skip');
    expect(await cell('error-thrown-string', 'latest').textContent()).toBe('✓ ≠');
    expect(await cell('timeout-spin', 'latest').textContent()).toBe('∅');
    expect(await cell('result-number', 'ours-remote').textContent()).toBe('⚠ infra-error');
  });

  it('filters to failures, to changed and to new cases, and says so when nothing matches', async () => {
    await page.selectOption('#filter-rows', 'failures');
    expect(await visibleCaseIds(page)).toEqual(['binary-result', 'result-number']);
    await page.selectOption('#filter-rows', 'changed');
    expect(await visibleCaseIds(page)).toEqual(['result-number']);
    await page.selectOption('#filter-rows', 'new');
    expect(await visibleCaseIds(page)).toEqual(['error-thrown-string']);
    await page.selectOption('#filter-rows', 'all');
    await page.fill('#filter-text', 'no such case anywhere');
    expect(await visibleCaseIds(page)).toEqual([]);
    expect(await page.locator('#empty').isVisible()).toBe(true);
    expect(await page.textContent('#empty')).toBe('No case matches these filters.');
    expect(await page.textContent('#shown-count')).toBe('showing 0 of 6 cases');
    await page.fill('#filter-text', '');
    expect(await page.locator('#empty').isHidden()).toBe(true);
    expect(await visibleCaseIds(page)).toHaveLength(6);
  });

  it('shows a failing cell’s reason and diff on click, with a link to the case line', async () => {
    await cell('result-number', '0.3.8').click();
    await page.locator('#details').waitFor({ state: 'visible' });
    expect(await page.textContent('#details-title')).toBe('result-number');
    expect(await page.textContent('#details pre.diff')).toBe(FIXTURE_DIFF);
    expect(await page.getAttribute('#details a[href*="cases/"]', 'href')).toMatch(/cases\/result\.yaml#L3$/);
    expect(new URL(page.url()).hash).toBe('#cell=result-number/0.3.8');
  });

  it('opens a cell from anywhere in its table cell, not only its badge, below the column heads', async () => {
    // A short window scrolled to the end, so the heads stick to its top where the panel would sit.
    const short = await browser.newPage({ viewport: { width: 1400, height: 420 } });
    try {
      await short.goto(pageUrl);
      await short.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      const box = short.locator('td', { has: short.locator('a.cell[data-case="result-number"][data-column="0.3.8"]') });
      const area = (await box.boundingBox())!;
      const badge = (await short.locator('a.cell[data-case="result-number"][data-column="0.3.8"]').boundingBox())!;
      // The cell's far corner, outside the badge.
      const corner = { x: area.x + area.width - 2, y: area.y + area.height - 2 };
      expect(corner.x > badge.x + badge.width || corner.y > badge.y + badge.height).toBe(true);
      await short.mouse.click(corner.x, corner.y);
      await short.locator('#details').waitFor({ state: 'visible' });
      expect(await short.textContent('#details-title')).toBe('result-number');
      expect(new URL(short.url()).hash).toBe('#cell=result-number/0.3.8');
      // The heads (th) stick to the top of the window, where the panel would otherwise sit.
      const heads = await short.$$eval('#grid thead th', (nodes) =>
        nodes.map((node) => node.getBoundingClientRect()).map(({ top, bottom }) => ({ top, bottom })),
      );
      expect(Math.min(...heads.map((head) => head.top))).toBeLessThanOrEqual(1);
      const panel = (await short.locator('#details').boundingBox())!;
      expect(panel.y).toBeGreaterThanOrEqual(Math.max(...heads.map((head) => head.bottom)));
    } finally {
      await short.close();
    }
  });

  it('opens a cell straight from its link, and shows a hostile reason as text', async () => {
    const other = await browser.newPage();
    await other.goto(`${pageUrl}#cell=result-number/latest`);
    await other.locator('#details').waitFor({ state: 'visible' });
    expect(await other.textContent('#details dd:nth-of-type(3)')).toBe(HOSTILE_REASON);
    expect(await other.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
    await other.close();
  });

  it('is usable at 800 px: nothing runs off the right edge, and the last column is on screen', async () => {
    const narrow = await browser.newPage({ viewport: { width: 800, height: 900 } });
    await narrow.goto(pageUrl);
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(800);
    const last = await narrow.locator('a.cell[data-case="result-number"][data-column="latest"]').boundingBox();
    expect(last!.x + last!.width).toBeLessThanOrEqual(800);
    await narrow.screenshot({ path: join(dir, 'narrow.png'), fullPage: false });
    expect(readFileSync(join(dir, 'narrow.png')).subarray(1, 4).toString()).toBe('PNG');
    await narrow.close();
  });
});

describe('index.html with the newest release and a flaky cell', () => {
  const nightlyDir = mkdtempSync(join(tmpdir(), 'matrix-nightly-page-'));
  let nightly: Page;
  let newestCounts: Record<string, number>;
  afterAll(() => rmSync(nightlyDir, { recursive: true, force: true }));

  beforeAll(async () => {
    const run = fixtureRun({ outcomes: { 'result-number@0.3.8': { result: 'ok' } } });
    const latest = run.columns.find((column) => column.id === 'latest')!;
    const newest: MatrixColumn = {
      ...latest,
      id: 'newest',
      label: 'newest (0.6.0)',
      versions: { ...latest.versions, codemode: '0.6.0' },
      release: {
        published: '2026-11-30T08:00:00.000Z',
        peerRange: '>=0.2.2 <0.6.0',
        inPeerRange: false,
        chosenBy: 'registry',
      },
    };
    // The newest release breaks one case; one case of ours passed only on its rerun.
    const newestCells = run.cells
      .filter((cell) => cell.column === 'latest')
      .map(
        (cell): MatrixCell =>
          cell.case === 'result-number'
            ? {
                ...cell,
                column: 'newest',
                status: 'fail',
                reason: 'outcome differs from expect in result',
                diff: FIXTURE_DIFF,
              }
            : { ...cell, column: 'newest' },
      );
    const cells = [...run.cells, ...newestCells].map((cell) =>
      cell.case === 'result-number' && cell.column === 'ours'
        ? { ...cell, rerun: { status: 'fail' as const, reason: 'Execution timed out after 300 ms' } }
        : cell,
    );
    const outcomes = new Map([
      [cellKey('result-number', 'latest'), { result: 'ok' }],
      [cellKey('result-number', 'newest'), { result: 'other' }],
    ]);
    // A column that runs only one kind of case: the reason the others are not run is one fact about the column.
    const flowsOnly: MatrixColumn = {
      ...run.columns.find((column) => column.id === 'ours')!,
      id: 'ours-worker',
      label: 'ours-worker',
      kind: 'ours-worker',
    };
    cells.push(
      ...run.cases.map(
        (item, index): MatrixCell =>
          index === 0
            ? { case: item.id, column: 'ours-worker', status: 'pass' }
            : {
                case: item.id,
                column: 'ours-worker',
                status: 'unsupported',
                reason: 'runtime flows only',
                label: 'flows only',
              },
      ),
    );
    const columns = [...run.columns, flowsOnly, newest];
    const ids = run.cases.map((item) => item.id);
    const triaged = run.cases.map((item) =>
      item.id === 'result-number'
        ? {
            ...item,
            triage: { link: 'https://github.com/cloudflare/agents/issues/1', note: 'Upstream rounds numbers.' },
          }
        : item,
    );
    const nightlyRun: MatrixRun = {
      ...run,
      cases: triaged,
      columns,
      cells,
      releaseDiff: releaseDiff(latest, newest, ids, cells, outcomes),
      summary: summarize(columns, cells),
    };
    writeReports(nightlyRun, nightlyDir);
    newestCounts = nightlyRun.summary.columns.find((summary) => summary.column === 'newest')!.counts;
    nightly = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    nightly.on('pageerror', (error) => pageErrors.push(error.message));
    await nightly.route(/^(?!file:)/, (route) => route.abort());
    await nightly.goto(pathToFileURL(join(nightlyDir, 'index.html')).href);
  });

  it('opens with the release diff: the newly failing case, both outcomes, links to both cells', async () => {
    const diffTop = await nightly.locator('#release-diff').evaluate((node) => node.getBoundingClientRect().top);
    const sinceTop = await nightly.locator('#since').evaluate((node) => node.getBoundingClientRect().top);
    expect(diffTop).toBeLessThan(sinceTop);
    await expect.poll(() => nightly.locator('#release-diff-title').textContent()).toBe('Release diff: 0.5.6 → 0.6.0');
    const row = nightly.locator('table.diff-table[data-kind="newly-failing"] tr[data-case="result-number"]');
    expect(await row.locator('code.outcome').allTextContents()).toEqual(['{"result":"ok"}', '{"result":"other"}']);
    expect(
      await row.locator('a.cell-link').evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
    ).toEqual(['#cell=result-number/latest', '#cell=result-number/newest']);
    await row.locator('a.cell-link').nth(1).click();
    expect(await nightly.locator('#details-title').textContent()).toBe('result-number');
    expect(await nightly.locator('#details-body').textContent()).toContain('newest (0.6.0)');
    // The failing row is brought into view, not left far below.
    const box = await nightly.locator('a.cell.selected').evaluate((node) => node.getBoundingClientRect().top);
    expect(box).toBeGreaterThanOrEqual(0);
    expect(box).toBeLessThan(900);
  });

  for (const [width, height] of [
    [1400, 900],
    [800, 900],
  ] as const)
    it(`keeps every column clear of the open panel while the page scrolls, and shows the failing row, at ${width} px`, async () => {
      const view = await browser.newPage({ viewport: { width, height } });
      try {
        await view.goto(pathToFileURL(join(nightlyDir, 'index.html')).href);
        // A failure clicked in the list above the grid opens its panel and scrolls to its row.
        await view.locator('#failures a.cell-link[data-case="result-number"][data-column="newest"]').click();
        await view.locator('#details').waitFor({ state: 'visible' });
        /**
         * What the panel covers of the column heads and, beside a panel on the right (a wide window),
         * of the visible cells too. A sheet along the bottom (800 px) covers rows, never columns.
         */
        const overlaps = () =>
          view.evaluate(() => {
            const panel = document.getElementById('details')!.getBoundingClientRect();
            const sheet = panel.left < window.innerWidth / 2;
            const covers = (box: DOMRect) =>
              box.left < panel.right && box.right > panel.left && box.top < panel.bottom && box.bottom > panel.top;
            const onScreen = (box: DOMRect) => box.bottom > 0 && box.top < window.innerHeight;
            const boxes = Array.from(document.querySelectorAll(sheet ? 'th.col-head' : 'th.col-head, a.cell')).filter(
              (node) => onScreen(node.getBoundingClientRect()),
            );
            return {
              covered: boxes
                .filter((node) => covers(node.getBoundingClientRect()))
                .map(
                  (node) => `${(node as HTMLElement).dataset.case ?? 'head'} ${(node as HTMLElement).dataset.column}`,
                ),
              seen: boxes.length,
              scrollWidth: document.documentElement.scrollWidth,
            };
          });
        const selected = await view
          .locator('a.cell.selected')
          .evaluate((node) => [node.getAttribute('data-case'), node.getAttribute('data-column')]);
        expect(selected).toEqual(['result-number', 'newest']);
        // The row is in the part of the window that neither the sticking heads nor the panel cover.
        const free = await view.evaluate(() => {
          const cell = document.querySelector('a.cell.selected')!.getBoundingClientRect();
          const panel = document.getElementById('details')!.getBoundingClientRect();
          const heads = Array.from(document.querySelectorAll('#grid thead th')).map((th) => th.getBoundingClientRect());
          const headsBottom = Math.max(...heads.map((head) => head.bottom));
          const sheet = panel.left < window.innerWidth / 2;
          return cell.top >= headsBottom && cell.bottom <= (sheet ? panel.top : window.innerHeight);
        });
        expect(free).toBe(true);
        // From above the grid to its last row, through the rows the heads stick above.
        const gridTop = await view.evaluate(
          () => document.getElementById('grid')!.getBoundingClientRect().top + scrollY,
        );
        const gridHeight = await view.evaluate(() => document.getElementById('grid')!.getBoundingClientRect().height);
        for (const scroll of [gridTop - 300, gridTop, gridTop + gridHeight / 2, gridTop + gridHeight - 200]) {
          await view.evaluate((y) => window.scrollTo(0, y), scroll);
          const seen = await overlaps();
          expect(seen.covered, `covered at scroll ${scroll}`).toEqual([]);
          expect(seen.seen).toBeGreaterThan(0);
          expect(seen.scrollWidth).toBeLessThanOrEqual(width);
        }
        // Scrolled to the end, the last row stands clear of the panel, a sheet included.
        await view.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        const lastRowClear = await view.evaluate(() => {
          const panel = document.getElementById('details')!.getBoundingClientRect();
          const rows = Array.from(document.querySelectorAll('tr.case-row'));
          const last = rows[rows.length - 1]!.getBoundingClientRect();
          return panel.left < window.innerWidth / 2 ? last.bottom <= panel.top : last.right <= panel.left;
        });
        expect(lastRowClear).toBe(true);
        // Closed, the page takes its whole width again.
        await view.click('#details-close');
        expect(await view.evaluate(() => document.body.classList.contains('details-open'))).toBe(false);
      } finally {
        await view.close();
      }
    });

  it('shows how each column did on the first screen, with the changes since the previous run', async () => {
    const box = await nightly.locator('#column-summary').evaluate((node) => node.getBoundingClientRect().bottom);
    expect(box).toBeLessThan(900);
    const row = await nightly.locator('#column-summary tr[data-column="newest"] td').allTextContents();
    expect(row).toEqual([...CELL_STATUSES.map((status) => String(newestCounts[status])), '—']);
    expect(newestCounts.fail).toBe(1); // the case the newest release breaks
  });

  it("says a reason most of a column's cells share once, in its head, not under every case", async () => {
    expect(await nightly.locator('th.col-head[data-column="ours-worker"] .col-wide').textContent()).toBe(
      'not run on 5 cases: runtime flows only',
    );
    expect(await nightly.locator('tr.case-row .notes').allTextContents()).not.toContainEqual(
      expect.stringContaining('runtime flows only'),
    );
  });

  it("says once, in the newest column's head, its publish date and that it is outside the peer range", async () => {
    expect(await nightly.locator('th.col-head[data-column="newest"] .col-note').textContent()).toBe(
      "the npm registry's newest, published 2026-11-30 · outside the supported range >=0.2.2 <0.6.0",
    );
  });

  it("shows a case's triage entry on the case and in the release diff", async () => {
    const expected = 'triage: Upstream rounds numbers. https://github.com/cloudflare/agents/issues/1';
    expect(await nightly.locator('#case-result-number .note-triage').textContent()).toBe(expected);
    expect(await nightly.locator('#release-diff tr[data-case="result-number"] .note-triage').textContent()).toBe(
      expected,
    );
    expect(await nightly.locator('#release-diff .triage-link').getAttribute('href')).toBe(
      'https://github.com/cloudflare/agents/issues/1',
    );
  });

  it('shows a flaky cell as flaky, lists it apart from the failures, and keeps its first failure', async () => {
    expect(await nightly.locator('a.cell[data-case="result-number"][data-column="ours"]').textContent()).toBe(
      '✓ flaky',
    );
    expect(await nightly.locator('.flaky-list li').allTextContents()).toEqual([
      'result-number on ours: first attempt: Execution timed out after 300 ms',
    ]);
    expect(await nightly.locator('#failures > ul.changes:not(.flaky-list) li').allTextContents()).not.toContainEqual(
      expect.stringContaining('on ours'),
    );
  });
});

describe("index.html of a fresh clone's first run", () => {
  // A directory with no run of its own, beside a committed snapshot of two runs that had fewer cases.
  const snapshotDir = mkdtempSync(join(tmpdir(), 'matrix-snapshot-'));
  const freshDir = mkdtempSync(join(tmpdir(), 'matrix-fresh-page-'));
  const ADDED = Array.from({ length: 20 }, (_, index) => `added-case-${String(index + 1).padStart(2, '0')}`);
  let fresh: Page;
  afterAll(() => {
    rmSync(snapshotDir, { recursive: true, force: true });
    rmSync(freshDir, { recursive: true, force: true });
  });

  beforeAll(async () => {
    writeReports(fixtureRun({ date: '2026-11-27T03:00:00.000Z' }), snapshotDir);
    writeReports(fixtureRun({ date: '2026-11-28T03:00:00.000Z' }), snapshotDir);
    const run = fixtureRun({ date: '2026-11-30T03:00:00.000Z' });
    const template = run.cases.find((item) => item.id === 'result-number')!;
    const cases = [...run.cases, ...ADDED.map((id) => ({ ...template, id, description: `Added ${id}` }))];
    const latest = run.columns.find((column) => column.id === 'latest')!;
    // The registry's newest is the lock's release: its cells are latest's, and no diff is made.
    const newest: MatrixColumn = { ...latest, id: 'newest', label: 'newest (0.5.6)', sameAs: 'latest' };
    const columns = [...run.columns, newest];
    const cells = [
      ...run.cells,
      ...run.cells.filter((cell) => cell.column === 'latest').map((cell) => ({ ...cell, column: 'newest' })),
      ...ADDED.flatMap((id) => columns.map((column): MatrixCell => ({ case: id, column: column.id, status: 'pass' }))),
    ];
    writeReports(
      { ...run, cases, columns, cells, summary: summarize(columns, cells) },
      freshDir,
      join(snapshotDir, 'history'),
    );
    fresh = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    fresh.on('pageerror', (error) => pageErrors.push(error.message));
    await fresh.route(/^(?!file:)/, (route) => route.abort());
    await fresh.goto(pathToFileURL(join(freshDir, 'index.html')).href);
  });

  it('draws the trend from the committed history it compares with, and says so', async () => {
    expect(await fresh.textContent('#since')).toContain(
      'compared with the committed snapshot in reports/: the run of 2026-11-28T03:00:00.000Z',
    );
    expect(await fresh.locator('#trend figure.trend').count()).toBeGreaterThan(0);
    expect(await fresh.textContent('#trend')).toContain(
      "No earlier run is recorded in this directory, so the history starts with the committed snapshot's 2 runs in reports/history/.",
    );
    expect(await fresh.textContent('#trend')).not.toContain('no trend yet');
    // Three runs in the strips: the snapshot's two, then this one.
    expect(await fresh.locator('#case-result-number .strip .strip-cell').count()).toBe(3);
  });

  it('lists the first new cases and folds the rest', async () => {
    const list = fresh.locator('#since p.case-list');
    expect(await list.textContent()).toBe(`New cases (20): ${ADDED.slice(0, 8).join(', ')}`);
    const more = fresh.locator('#since details.more').filter({ hasText: '12 more' });
    expect(await more.locator('summary').textContent()).toBe('12 more');
    expect(await more.evaluate((node) => (node as HTMLDetailsElement).open)).toBe(false);
    expect(await more.locator('a.case-id').allTextContents()).toEqual(ADDED.slice(8));
  });

  it('says on the first screen why there is no release diff', async () => {
    const box = fresh.locator('#release-diff');
    expect(await box.isVisible()).toBe(true);
    expect(await box.locator('p').textContent()).toBe(
      "No release diff: newest is the same release as latest (0.5.6), so its cells are latest's, not run twice, and there is nothing to compare.",
    );
    expect(await box.evaluate((node) => node.getBoundingClientRect().bottom)).toBeLessThan(900);
    expect(readFileSync(join(freshDir, 'matrix.md'), 'utf8')).toContain(
      "> No release diff: newest is the same release as latest (0.5.6), so its cells are latest's",
    );
    expect(pageErrors).toEqual([]);
  });
});
