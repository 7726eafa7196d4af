import { describe, expect, it } from 'vitest';
import { FIXTURE_DIFF, FIXTURE_REMOTE_BREAK, fixtureRun, greenFixtureRun } from '../test-support/report-run.js';
import type { MatrixRun } from './model.js';
import { MARKDOWN_LIST_LIMIT, renderMatrixMarkdown } from './write-markdown.js';

describe('matrix.md', () => {
  const written: MatrixRun = {
    ...fixtureRun(),
    since: {
      previous: { date: '2026-11-28T03:15:00.000Z', commit: 'abcdef1234567890' },
      changes: [{ case: 'result-number', column: '0.3.8', from: 'pass', to: 'fail' }],
      newCases: ['error-thrown-string'],
      removedCases: ['gone-case'],
    },
  };
  const markdown = renderMatrixMarkdown(written);

  it('opens with the verdict, then the run, then what changed since the previous run, naming it', () => {
    const verdict = markdown.indexOf('**Not green: 2 failures, 6 infra-errors (not results).**');
    const since = markdown.indexOf('## Since the previous run');
    const columns = markdown.indexOf('## Columns');
    expect(verdict).toBeGreaterThan(0);
    expect(verdict).toBeLessThan(since);
    expect(since).toBeLessThan(columns);
    expect(markdown).toContain('Compared with the run of 2026-11-28T03:15:00.000Z (commit abcdef123456).');
    expect(markdown).toContain('- [`result-number`](../cases/result.yaml#L3): 0.3.8: pass → fail');
    expect(markdown).toContain('New case (1): [`error-thrown-string`](../cases/errors.yaml#L3)');
    expect(markdown).toContain('Removed case (1): `gone-case`');
  });

  it('says when there is nothing to compare with, and when nothing changed', () => {
    expect(renderMatrixMarkdown(fixtureRun())).toContain(
      'No earlier run is recorded in this directory, so there is nothing to compare with.',
    );
    const unchanged = renderMatrixMarkdown({
      ...fixtureRun(),
      since: {
        previous: { date: '2026-11-28T03:15:00.000Z', commit: null },
        changes: [],
        newCases: [],
        removedCases: [],
      },
    });
    expect(unchanged).toContain('Compared with the run of 2026-11-28T03:15:00.000Z.\n\nNo cell changed status.');
  });

  it('says, in a banner, which columns a limited run left out', () => {
    const limited = { ...fixtureRun(), run: { ...fixtureRun().run, columnsLeftOut: ['0.4.1', '0.4.4'] } };
    expect(renderMatrixMarkdown(limited)).toContain(
      '> This run was limited with --columns: 0.4.1, 0.4.4 did not run, so their cells are missing, not passing.',
    );
  });

  it('summarizes every column with its versions and counts', () => {
    expect(markdown).toContain('| column | versions | pass | fail | skip | unsupported | infra-error |');
    expect(markdown).toContain(
      '| ✓ **ours** | executor 0.1.0 · workerd 1.20260426.1 · compat 2025-06-01 · flags nodejs_compat | 6 | 0 | 0 | 0 | 0 |',
    );
    expect(markdown).toContain(
      '| ✗ **0.2.2** | codemode 0.2.2 · workerd 1.20260426.1 · wrangler 4.86.0 · compat 2025-06-01 · flags nodejs_compat | 2 | 1 (1 stale skip) | 2 | 1 | 0 |',
    );
    expect(markdown).toContain('| ⚠ **ours-remote** |');
  });

  it('lists each failure with its case link, reason and folded diff, and infra-errors apart', () => {
    expect(markdown).toContain('## Failures (2)');
    expect(markdown).toContain(
      '- [`result-number`](../cases/result.yaml#L3) on **0.3.8**: outcome differs from expect in result',
    );
    expect(markdown).toContain(
      `  <details><summary>diff</summary>\n\n${['```', ...FIXTURE_DIFF.split('\n'), '```'].map((line) => `  ${line}`).join('\n')}\n\n  </details>`,
    );
    expect(markdown).toMatch(
      /- \[`binary-result`\]\(\.\.\/cases\/binary\.yaml#L20\) on \*\*0\.2\.2\*\*: unexpected pass: the skip is stale/,
    );
    const failures = markdown.slice(markdown.indexOf('## Failures'), markdown.indexOf('## Infra-errors'));
    expect(failures).not.toContain('ours-remote');
    expect(markdown).toContain(
      `## Infra-errors (1), not results\n\n- column **ours-remote** did not run: ${FIXTURE_REMOTE_BREAK}`,
    );
    expect(markdown).not.toContain('on **ours-remote**'); // one line for the column, not one per cell
  });

  it('says green when nothing failed and nothing broke', () => {
    const green = renderMatrixMarkdown(greenFixtureRun());
    expect(green).toContain('**Green: no failure and no infra-error in any column.**');
    expect(green).toContain('## Failures (0)\n\nNone.');
    expect(green).toContain('## Infra-errors (0), not results\n\nNone.');
  });

  it('cuts a long failure list and says how many are left off', () => {
    const run = fixtureRun();
    const cells = Array.from({ length: MARKDOWN_LIST_LIMIT + 3 }, (_, index) => ({
      case: `c${index}`,
      column: 'ours',
      status: 'fail' as const,
      reason: 'r',
    }));
    expect(renderMatrixMarkdown({ ...run, cells })).toContain('- … and 3 more (see index.html or matrix.json)');
  });

  it('escapes table cells so a label with pipes cannot break the table', () => {
    const run = fixtureRun();
    const tricky = {
      ...run,
      columns: run.columns.map((column) => (column.id === 'ours' ? { ...column, label: 'a | b' } : column)),
    };
    expect(renderMatrixMarkdown(tricky)).toContain('| ✓ **a \\| b** |');
  });
});

describe('changes since the previous run', () => {
  it('are listed once per case, its columns grouped by the change they share', () => {
    const run: MatrixRun = {
      ...fixtureRun(),
      since: {
        previous: { date: '2026-11-28T03:15:00.000Z', commit: null },
        changes: [
          { case: 'binary-arg', column: '0.2.2', from: 'unsupported', to: 'skip' },
          { case: 'binary-arg', column: '0.3.8', from: 'unsupported', to: 'pass' },
          {
            case: 'binary-arg',
            column: 'latest',
            from: 'unsupported',
            to: 'pass',
            releases: { from: '0.5.5', to: '0.5.6' },
          },
          { case: 'result-number', column: '0.3.8', from: 'pass', to: 'fail' },
        ],
        newCases: [],
        removedCases: [],
      },
    };
    expect(renderMatrixMarkdown(run)).toContain(
      [
        '- [`binary-arg`](../cases/binary.yaml#L3): 0.2.2: unsupported → skip; 0.3.8: unsupported → pass; latest (0.5.6): unsupported → pass (0.5.5 → 0.5.6)',
        '- [`result-number`](../cases/result.yaml#L3): 0.3.8: pass → fail',
      ].join('\n'),
    );
  });
});

describe('matrix.md across runs', () => {
  it('lists flaky cells apart from the changes since the previous run', () => {
    const run = fixtureRun();
    const flaky = { case: 'result-number', column: '0.3.8', from: 'pass' as const, to: 'fail' as const };
    const markdown = renderMatrixMarkdown({
      ...run,
      since: {
        previous: { date: '2026-11-28T03:00:00.000Z', commit: run.run.commit },
        changes: [],
        newCases: [],
        removedCases: [],
        flaky: [flaky],
      },
    });
    expect(markdown).toContain('No cell changed status.');
    expect(markdown).toMatch(
      /Flaky \(1\): changed status although[^\n]*\n\n- \[`result-number`\]\([^)]*\): 0\.3\.8: pass → fail/,
    );
  });
});
