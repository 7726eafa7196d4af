/**
 * The report shows the fuzz run written beside it: programs run, differences found, and each new
 * draft linked to its case file, in matrix.md and on the page; with no fuzz.json, no section.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FuzzSummary } from '../fuzz/run.js';
import { fixtureRun } from '../test-support/report-run.js';
import { FUZZ_SUMMARY_FILE } from './fuzz-section.js';
import { writeReports } from './write-reports.js';

const scratch = mkdtempSync(join(tmpdir(), 'fuzz-report-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const summary: FuzzSummary = {
  seed: 20261205,
  column: 'latest',
  asked: 500,
  ran: 480,
  same: 440,
  known: { 'error-thrown-string': 30 },
  knownFirstAt: { 'error-thrown-string': 7 },
  flaky: 2,
  notRun: 20,
  differences: [
    { signature: 'logs:array/array', index: 42, draft: 'drafts/fuzz-b000301445.yaml', isNew: true, lines: 6, diff: '' },
    {
      signature: 'result:number/number',
      index: 90,
      draft: 'drafts/fuzz-0123456789.yaml',
      isNew: false,
      lines: 3,
      diff: '',
    },
  ],
  shrinkRuns: 16,
  durationMs: 600_000,
  busyMs: { ours: 500_000, reference: 400_000 },
  sidePrograms: { ours: 480, reference: 480 },
  outOfBudget: true,
};

describe('the report’s fuzzing section', () => {
  it('says what the fuzz run found and links each new draft, in matrix.md and on the page', () => {
    const dir = join(scratch, 'with');
    writeReports(fixtureRun(), dir);
    writeFileSync(join(dir, FUZZ_SUMMARY_FILE), JSON.stringify(summary));
    writeReports(fixtureRun(), dir);
    const markdown = readFileSync(join(dir, 'matrix.md'), 'utf8');
    expect(markdown).toContain('## Fuzzing');
    expect(markdown).toContain(
      'Seed 20261205, ours against latest: 480 programs run (of 500), 34 differences: 30 documented, 2 flaky, 2 new.',
    );
    expect(markdown).toContain(
      '- [`fuzz-b000301445.yaml`](drafts/fuzz-b000301445.yaml): differs in logs:array/array, first at program 42',
    );
    expect(markdown).not.toContain('fuzz-0123456789'); // drafted by an earlier run: not new
    const page = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(page).toContain('<h2 id="fuzz-title">Fuzzing</h2>');
    expect(page).toContain('<a href="drafts/fuzz-b000301445.yaml"><code>fuzz-b000301445.yaml</code></a>');
  });

  it('is absent when no fuzz run wrote beside the report', () => {
    const dir = join(scratch, 'without');
    writeReports(fixtureRun(), dir);
    expect(readFileSync(join(dir, 'matrix.md'), 'utf8')).not.toContain('## Fuzzing');
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).not.toContain('id="fuzz"');
  });
});
