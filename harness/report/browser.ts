/**
 * Headless Chromium for the page's tests and the README screenshot: Debian's `chromium`
 * (installed by `.ci/run` when missing) driven by playwright-core. No network, no sandbox
 * helpers, nothing that phones home. Run as a script it writes a PNG of a page's first screen:
 * `npx tsx harness/report/browser.ts [reports/index.html] [docs/report.png]`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { messageOf } from '../../src/protocol/index.js';
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

/** A PNG of the page's first screen, as the README shows it; nothing but `file:` is loaded. */
async function screenshotPage(htmlPath: string, pngPath: string): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
    await page.route(/^(?!file:)/, (route) => route.abort());
    await page.goto(pathToFileURL(resolve(htmlPath)).href);
    await page.screenshot({ path: pngPath });
  } finally {
    await browser.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [html = 'reports/index.html', png = 'docs/report.png'] = process.argv.slice(2);
  screenshotPage(html, png).then(
    () => console.log(`wrote ${png}`),
    (error: unknown) => {
      console.error(messageOf(error));
      process.exitCode = 1;
    },
  );
}
