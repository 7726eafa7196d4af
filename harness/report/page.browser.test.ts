/**
 * The report page in a real browser: reports/index.html rendered from the fixture into a temporary
 * directory and opened from the file system in headless Chromium, as a reader would open it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './browser.js';
import { FIXTURE_DIFF, FIXTURE_REMOTE_BREAK, fixtureRun } from './fixture.js';
import { texts } from './texts.js';
import { writeReports } from './write-reports.js';

/** A reason that would end the data script early if the writer did not escape it. */
const HOSTILE_REASON = 'engine said </script><script>window.__injected = true</script> & <b>bold</b>';

const dir = mkdtempSync(join(tmpdir(), 'matrix-page-'));
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
let pageUrl: string;

beforeAll(async () => {
  // Two runs, so the page has a transition to show; the second carries the hostile reason.
  writeReports(
    fixtureRun({
      date: '2026-11-28T03:00:00.000Z',
      overrides: { 'result-number@latest': { kind: 'judged', pass: true } },
    }),
    dir,
  );
  writeReports(
    fixtureRun({
      date: '2026-11-29T03:00:00.000Z',
      overrides: { 'result-number@latest': { kind: 'judged', pass: false, reason: HOSTILE_REASON } },
    }),
    dir,
  );
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

describe('reports/index.html in Chromium', () => {
  it('renders the grid: rows grouped by area, one column per release plus ours, a summary per column', async () => {
    expect(
      await page.$$eval('#grid tbody', (bodies) => bodies.map((body) => (body as HTMLElement).dataset.area)),
    ).toEqual(['dispatch', 'results', 'timeouts']);
    expect(await visibleCaseIds(page)).toEqual([
      'args-two-numbers',
      'args-bytes',
      'collision-detected',
      'result-number',
      'result-undefined',
      'spin-times-out',
      'spin-after-await',
    ]);
    expect(await page.$$eval('th.col-head .col-label', (heads) => heads.map((head) => head.textContent))).toEqual([
      'ours',
      'ours-remote',
      '0.2.2',
      '0.3.8',
      '0.4.4',
      'latest (0.5.6)',
    ]);
    expect(await page.locator('a.cell').count()).toBe(42);
    expect(await page.textContent('[data-summary-for="0.2.2"]')).toBe('✓ 2✗ 1– 3∅ 1');
    expect(await page.textContent('[data-summary-for="ours-remote"]')).toBe(`✓ 0✗ 0⚠ 7⚠ ${texts.columnDidNotRun}`);
    expect(await page.getAttribute('[data-summary-for="ours-remote"] .col-infra', 'title')).toBe(FIXTURE_REMOTE_BREAK);
    expect(await page.textContent('#column-problems')).toBe(`⚠ ours-remote: ${FIXTURE_REMOTE_BREAK}`);
    expect(await page.textContent('#verdict')).toBe('✗ Not green: 3 failed, 7 infra-errors (not results)');
    expect(pageErrors).toEqual([]);
  });

  it('marks each status distinctly, a stale skip apart from a plain failure', async () => {
    const cell = (caseId: string, column: string) =>
      page.locator(`a.cell[data-case="${caseId}"][data-column="${column}"]`);
    expect(await cell('args-two-numbers', '0.3.8').textContent()).toBe('✗ fail');
    expect(await cell('collision-detected', '0.2.2').textContent()).toBe(`✗ ${texts.staleMark}`);
    expect(await cell('collision-detected', '0.2.2').getAttribute('class')).toBe('cell s-fail stale');
    expect(await cell('args-bytes', '0.2.2').textContent()).toBe('– skip');
    expect(await cell('spin-times-out', 'latest').textContent()).toBe('∅ unsupported');
    expect(await cell('result-number', 'ours-remote').textContent()).toBe('⚠ infra-error');
  });

  it('filters to failures only, hiding passing rows, and back', async () => {
    await page.selectOption('#filter-rows', 'failures');
    expect(await visibleCaseIds(page)).toEqual(['args-two-numbers', 'collision-detected', 'result-number']);
    expect(await page.locator('#case-result-undefined').isHidden()).toBe(true);
    expect(await page.textContent('#shown-count')).toBe('showing 3 of 7 cases');
    await page.selectOption('#filter-rows', 'infra');
    expect(await visibleCaseIds(page)).toHaveLength(7);
    await page.selectOption('#filter-rows', 'all');
    expect(await visibleCaseIds(page)).toHaveLength(7);
  });

  it('filters to one area and to one feature', async () => {
    await page.selectOption('#filter-area', 'timeouts');
    expect(await visibleCaseIds(page)).toEqual(['spin-times-out', 'spin-after-await']);
    expect(await page.locator('tbody[data-area="dispatch"]').isHidden()).toBe(true);
    await page.selectOption('#filter-area', '');
    await page.selectOption('#filter-feature', 'binary-codec');
    expect(await visibleCaseIds(page)).toEqual(['args-bytes']);
    await page.selectOption('#filter-feature', '');
    expect(await visibleCaseIds(page)).toHaveLength(7);
  });

  it('shows a failing cell’s reason on hover and its diff on click, with a link to the case', async () => {
    const failing = page.locator('a.cell[data-case="args-two-numbers"][data-column="0.3.8"]');
    expect(await failing.getAttribute('title')).toBe('outcome differs from expect in result');
    expect(await page.locator('#details').isHidden()).toBe(true);
    await failing.click();
    await page.locator('#details').waitFor({ state: 'visible' });
    expect(await page.textContent('#details-title')).toBe('args-two-numbers');
    expect(await page.textContent('#details pre.diff')).toBe(FIXTURE_DIFF);
    expect(await page.getAttribute('#details a[href^="../cases/"]', 'href')).toBe('../cases/dispatch.yaml#L3');
    expect(new URL(page.url()).hash).toBe('#cell=args-two-numbers/0.3.8');
    await page.screenshot({ path: join(dir, 'details.png') });
    expect(readFileSync(join(dir, 'details.png')).subarray(1, 4).toString()).toBe('PNG');
  });

  it('opens a cell straight from its link, and shows a hostile reason as text', async () => {
    const other = await browser.newPage();
    await other.goto(`${pageUrl}#cell=${encodeURIComponent('result-number')}/latest`);
    await other.locator('#details').waitFor({ state: 'visible' });
    expect(await other.textContent('#details-title')).toBe('result-number');
    expect(await other.textContent('#details dd:nth-of-type(3)')).toBe(HOSTILE_REASON);
    expect(await other.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
    await other.close();
  });

  it('shows the transition between the two runs, with the first column that changed', async () => {
    const rows = await page.$$eval('#transitions tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.children, (td) => td.textContent)),
    );
    expect(rows).toEqual([
      ['2026-11-29T03:00:00.000Z · 3822a5fae1dd', 'result-number', 'latest (0.5.6)', 'latest: pass → fail'],
    ]);
  });
});
