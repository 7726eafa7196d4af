/** The closing summary: counts read from vitest's task results, and the table printed from them. */
import { describe, expect, it } from 'vitest';
import { type CatalogueTestMeta, emptyTally, formatSummary, type TaskLike, tallyTasks } from './catalogue-summary.js';

function test(catalogue: CatalogueTestMeta | undefined, mode: string, state?: string): TaskLike {
  return {
    type: 'test',
    mode,
    meta: catalogue ? { catalogue } : {},
    ...(state === undefined ? {} : { result: { state } }),
  };
}

const suite = (...tasks: TaskLike[]): TaskLike => ({ type: 'suite', mode: 'run', meta: {}, tasks });

describe('tallyTasks', () => {
  it('counts passes, failures, reasoned skips and tests that never ran, per side, at any depth', () => {
    const tree = suite(
      test(undefined, 'run', 'pass'), // Not a case test: not counted.
      suite(
        test({ side: 'ours', caseId: 'a' }, 'run', 'pass'),
        test({ side: 'ours', caseId: 'b' }, 'run', 'fail'),
        test({ side: 'ours', caseId: 'c', skip: 'ours differs on purpose' }, 'skip', 'skip'),
      ),
      suite(
        suite(
          test({ side: 'latest', caseId: 'a' }, 'run', 'fail'),
          test({ side: 'latest', caseId: 'b', infra: true }, 'run', 'fail'),
        ),
        test({ side: 'latest', caseId: 'c' }, 'run', 'skip'), // Its describe's beforeAll failed.
        test({ side: 'latest', caseId: 'd' }, 'skip'), // Filtered out by -t.
      ),
    );
    const tallies = tallyTasks(tree);
    expect(Object.fromEntries(tallies)).toEqual({
      ours: { ...emptyTally(), passed: 1, failed: 1, skipped: 1 },
      latest: { ...emptyTally(), failed: 2, infra: 1, notRun: 2 },
    });
  });
});

describe('formatSummary', () => {
  it('prints one aligned row per side with its versions and counts, then what went wrong', () => {
    const text = formatSummary(
      [
        {
          side: 'ours',
          versions: 'executor 0.1.0 · workerd 1.2',
          tally: { ...emptyTally(), passed: 340, skipped: 6 },
          extraSkips: 0,
        },
        {
          side: '0.2.2',
          versions: 'codemode 0.2.2 · workerd 1.2 · wrangler 4.86.0',
          tally: { ...emptyTally(), failed: 3, infra: 3, notRun: 280 },
          extraSkips: 51,
          trouble: '0.2.2 did not start: wrangler dev exited before it was ready',
        },
      ],
      397,
      51,
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      'Catalogue summary: 397 cases, 51 of them reference: false (ours only; counted as skipped on each reference column) — NOT green',
    );
    expect(lines[1]).toMatch(/^ {2}side +versions +passed +skipped +failed +not run$/);
    expect(lines[3]).toMatch(/^ {2}ours +executor 0\.1\.0 · workerd 1\.2 +340 +6 +0 +0$/);
    expect(lines[4]).toMatch(
      /^ {2}0\.2\.2 +codemode 0\.2\.2 · workerd 1\.2 · wrangler 4\.86\.0 +0 +51 +3 \(3 infra\) +280$/,
    );
    expect(lines[1]!.indexOf('passed') + 'passed'.length).toBe(lines[3]!.indexOf('340') + 3); // Right-aligned counts.
    expect(lines[5]).toBe('  0.2.2 did not start: wrangler dev exited before it was ready');
  });

  it('says all green only when nothing failed, nothing was left unrun and every side came up', () => {
    const row = { side: 'latest' as const, versions: 'v', tally: { ...emptyTally(), passed: 1 }, extraSkips: 0 };
    expect(formatSummary([row], 1, 0).split('\n')[0]).toMatch(/— all green$/);
    expect(formatSummary([{ ...row, tally: { ...row.tally, notRun: 1 } }], 1, 0).split('\n')[0]).toMatch(
      /— NOT green$/,
    );
  });
});
