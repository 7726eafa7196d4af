/**
 * Headless Chromium for the page's tests and the README screenshot: Debian's `chromium`
 * (installed by `.ci/run` when missing) driven by playwright-core. No network, no sandbox
 * helpers, nothing that phones home. Run as a script it writes a PNG of a page:
 * `npx tsx harness/report/browser.ts [reports/index.html] [docs/report.png] [--cell=<case>/<column>] [--width=1200] [--height=700] [--full-page]`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { messageOf } from '../../src/protocol/index.js';

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
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: run \`apt-get install -y chromium\` (or set CHROMIUM_PATH)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
}

export interface ScreenshotOptions {
  width?: number;
  height?: number;
  /** Open this cell's details first, e.g. `args-spread/0.2.2`. */
  cell?: string;
  filter?: 'all' | 'failures' | 'infra';
  fullPage?: boolean;
}

export async function screenshotPage(
  htmlPath: string,
  pngPath: string,
  options: ScreenshotOptions = {},
): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: options.width ?? 1200, height: options.height ?? 700 } });
    await page.route(/^(?!file:)/, (route) => route.abort());
    await page.goto(pathToFileURL(resolve(htmlPath)).href + (options.cell ? `#cell=${options.cell}` : ''));
    if (options.filter) await page.selectOption('#filter-rows', options.filter);
    await page.screenshot({ path: pngPath, fullPage: options.fullPage ?? false });
  } finally {
    await browser.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const flag = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const [html = 'reports/index.html', png = 'docs/report.png'] = args.filter((arg) => !arg.startsWith('--'));
  const width = flag('width');
  const height = flag('height');
  const options: ScreenshotOptions = {};
  if (width) options.width = Number(width);
  if (height) options.height = Number(height);
  const cell = flag('cell');
  if (cell) options.cell = cell;
  const filter = flag('filter');
  if (filter === 'all' || filter === 'failures' || filter === 'infra') options.filter = filter;
  if (args.includes('--full-page')) options.fullPage = true;
  screenshotPage(html, png, options).then(
    () => console.log(`wrote ${png}`),
    (error: unknown) => {
      console.error(messageOf(error));
      process.exitCode = 1;
    },
  );
}
