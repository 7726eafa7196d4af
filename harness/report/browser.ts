/**
 * Headless Chromium for the page's tests and the README screenshot: Debian's `chromium`
 * (installed by `.ci/run` when missing) driven by playwright-core. No network, no sandbox
 * helpers, nothing that phones home. Run as a script it writes a PNG of a reports directory's
 * page, its first screen: `npx tsx harness/report/browser.ts [reports] [docs/report.png]`
 * (`npm run matrix -- --snapshot` does it for the committed snapshot).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { messageOf } from '../../src/protocol/index.js';
import { withPngText } from './png-text.js';
import { reportTexts } from './texts.js';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(reportTexts.noChromium(CHROMIUM_PATH));
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** The PNG text key under which the picture records the run it shows. */
export const PICTURE_RUN_KEY = 'codemode-matrix-run';

/** What a picture of a reports directory's page records: the run's date, case count and rules version. */
export function pictureStamp(reportsDir: string): string {
  const { run, cases } = JSON.parse(readFileSync(join(reportsDir, 'matrix.json'), 'utf8')) as {
    run: { date: string; interpreting: number };
    cases: unknown[];
  };
  return JSON.stringify({ date: run.date, cases: cases.length, interpreting: run.interpreting });
}

/**
 * A PNG of the first screen of a reports directory's page, as the README shows it, stamped with
 * the run it shows (so a test can tell a stale picture); nothing but `file:` is loaded.
 */
export async function screenshotReport(reportsDir: string, pngPath: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
    await page.route(/^(?!file:)/, (route) => route.abort());
    await page.goto(pathToFileURL(resolve(reportsDir, 'index.html')).href);
    const png = await page.screenshot();
    writeFileSync(pngPath, withPngText(png, PICTURE_RUN_KEY, pictureStamp(reportsDir)));
  } finally {
    await browser.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [reports = 'reports', png = 'docs/report.png'] = process.argv.slice(2);
  screenshotReport(reports, png).then(
    () => console.log(reportTexts.pictureWritten(png)),
    (error: unknown) => {
      console.error(messageOf(error));
      process.exitCode = 1;
    },
  );
}
