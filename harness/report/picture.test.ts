/**
 * docs/report.png, the README's picture of the report, shows the committed snapshot: it records
 * the run it was taken from, and that must be the snapshot's. `npm run matrix -- --snapshot`
 * retakes it; `npx tsx harness/report/browser.ts` does it alone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PICTURE_RUN_KEY, pictureStamp } from './browser.js';
import { pngTexts, withPngText } from './png-text.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('docs/report.png', () => {
  it('shows the committed snapshot: its date, its case count and its rules version', () => {
    const recorded = pngTexts(readFileSync(join(ROOT, 'docs', 'report.png')))[PICTURE_RUN_KEY];
    expect(recorded, 'docs/report.png records no run: retake it').toBeDefined();
    expect(JSON.parse(recorded!)).toEqual(JSON.parse(pictureStamp(join(ROOT, 'reports'))));
  });

  it('keeps its stamp readable beside the image data', () => {
    const png = readFileSync(join(ROOT, 'docs', 'report.png'));
    const stamped = withPngText(png, 'probe', 'a value');
    expect(pngTexts(stamped).probe).toBe('a value');
    expect(stamped.subarray(-12).toString('latin1', 4, 8)).toBe('IEND');
  });
});
