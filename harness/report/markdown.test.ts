import { describe, expect, it } from 'vitest';
import { summarizeRun } from './cell-rules.js';
import { FIXTURE_DIFF, FIXTURE_REMOTE_BREAK, fixtureRun, greenFixtureRun } from './fixture.js';
import type { MatrixRun } from './model.js';
import { texts } from './texts.js';
import { renderBadge } from './write-badge.js';
import { MARKDOWN_LIST_LIMIT, renderMatrixMarkdown } from './write-markdown.js';

describe('reports/matrix.md', () => {
  const markdown = renderMatrixMarkdown(fixtureRun(), []);

  it('summarizes every column with its versions and counts', () => {
    expect(markdown).toContain('| column | versions | pass | fail | skip | unsupported | infra-error |');
    expect(markdown).toContain(
      '| ✓ **ours** | executor 0.1.0 · workerd 1.20260426.1 · compat 2025-06-01 · flags nodejs_compat | 7 | 0 | 0 | 0 | 0 |',
    );
    expect(markdown).toContain(
      '| ✗ **0.2.2** | codemode 0.2.2 · workerd 1.20260426.1 · wrangler 4.86.0 · compat 2025-06-01 · flags nodejs_compat | 2 | 1 (1 stale skip) | 3 | 1 | 0 |',
    );
    expect(markdown).toContain('| ⚠ **ours-remote** |');
    expect(markdown).toContain('| ✓ **latest (0.5.6)** |');
  });

  it('says the run is not green, and lists each failure with its case link, reason and folded diff', () => {
    expect(markdown).toContain('**Not green**');
    expect(markdown).toContain('## Failures (2)');
    expect(markdown).toContain(
      '- [`args-two-numbers`](../cases/dispatch.yaml#L3) on **0.3.8**: outcome differs from expect in result',
    );
    expect(markdown).toContain(
      `  <details><summary>diff</summary>\n\n  \`\`\`\n${FIXTURE_DIFF.split('\n')
        .map((line) => `  ${line}`)
        .join('\n')}\n  \`\`\`\n\n  </details>`,
    );
    expect(markdown).toContain(
      `- [\`collision-detected\`](../cases/dispatch.yaml#L41) on **0.2.2**: ${texts.staleSkip('collision detection appeared in 0.3.7')}`,
    );
  });

  it('lists infra-errors apart from failures, and the column that did not run', () => {
    const failures = markdown.slice(markdown.indexOf('## Failures'), markdown.indexOf('## Infra-errors'));
    expect(failures).not.toContain('ours-remote');
    expect(markdown).toContain('## Infra-errors (7), not results');
    expect(markdown).toContain(`- column **ours-remote** did not run (7 cells): ${FIXTURE_REMOTE_BREAK}`);
    // One line for the broken column, not one per case.
    expect(markdown).not.toContain('on **ours-remote**');
  });

  it('says green when nothing failed and nothing broke', () => {
    const green = renderMatrixMarkdown(greenFixtureRun(), []);
    expect(green).toContain('**Green**: no failure and no infra-error in any column.');
    expect(green).toContain('## Failures (0)\n\nNone.');
    expect(green).toContain('## Infra-errors (0), not results\n\nNone.');
    expect(green).toContain('No case changed status between recorded runs.');
  });

  it('cuts a long failure list and says how many are left off', () => {
    const run = fixtureRun();
    const many: MatrixRun = {
      ...run,
      cells: Array.from({ length: MARKDOWN_LIST_LIMIT + 3 }, (_, index) => ({
        case: `c${index}`,
        column: 'ours',
        status: 'fail' as const,
        reason: 'r',
      })),
    };
    expect(renderMatrixMarkdown(many, [])).toContain('- … and 3 more (see index.html or matrix.json)');
  });

  it('escapes table cells so a reason with pipes cannot break the table', () => {
    const run = fixtureRun();
    const label = 'a | b';
    const tricky: MatrixRun = {
      ...run,
      columns: run.columns.map((column) => (column.id === 'ours' ? { ...column, label } : column)),
    };
    expect(renderMatrixMarkdown(tricky, [])).toContain('| ✓ **a \\| b** |');
  });
});

describe('reports/badge.json', () => {
  it('gives ours and the newest release, red when any column fails', () => {
    expect(renderBadge(fixtureRun())).toEqual({
      schemaVersion: 1,
      label: 'codemode compat',
      message: '7/7 ours · 0.5.6 ✓',
      color: 'red',
    });
  });

  it('is bright green when the matrix is green', () => {
    expect(renderBadge(greenFixtureRun())).toEqual({
      schemaVersion: 1,
      label: 'codemode compat',
      message: '7/7 ours · 0.5.6 ✓',
      color: 'brightgreen',
    });
  });

  it('counts our failures, and marks the newest release ✗ when it fails', () => {
    const run = greenFixtureRun();
    const cells = run.cells.map((cell) =>
      cell.case === 'result-number' && (cell.column === 'ours' || cell.column === 'latest')
        ? { ...cell, status: 'fail' as const, reason: 'r' }
        : cell,
    );
    const failing = { ...run, cells, summary: summarizeRun(run.columns, cells) };
    expect(renderBadge(failing)).toMatchObject({ message: '6/7 ours · 0.5.6 ✗', color: 'red' });
  });

  it('never reads an infra-error as a result: it is spelled out, and the badge is grey', () => {
    const run = greenFixtureRun();
    const columns = run.columns.map((column) =>
      column.id === 'latest' ? { ...column, infraError: 'wrangler dev did not start' } : column,
    );
    const cells = run.cells.map((cell) =>
      cell.column === 'latest' && cell.status === 'pass'
        ? { ...cell, status: 'infra-error' as const, reason: 'x' }
        : cell,
    );
    expect(renderBadge({ ...run, columns, cells, summary: summarizeRun(columns, cells) })).toEqual({
      schemaVersion: 1,
      label: 'codemode compat',
      message: '7/7 ours · 0.5.6 infra-error',
      color: 'lightgrey',
    });
  });
});
