import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCatalogue } from '../load-cases.js';
import { FIXTURE_ROOT, fixtureCases } from './fixture.js';
import { CATALOGUE_PATH, REPO_ROOT } from './paths.js';
import { texts } from './texts.js';
import { renderCatalogue } from './write-catalogue.js';

describe('reports/catalogue.md', () => {
  it('is in step with cases/ (regenerate with `npx tsx harness/cli/catalogue.ts`)', () => {
    const expected = renderCatalogue(loadCatalogue(), REPO_ROOT);
    const committed = readFileSync(CATALOGUE_PATH, 'utf8');
    expect(committed, texts.catalogueOutOfStep).toBe(expected);
  });
});

describe('renderCatalogue', () => {
  const markdown = renderCatalogue(fixtureCases, FIXTURE_ROOT);

  it('says it is generated, and counts cases, areas, skips and reference: false', () => {
    expect(markdown.startsWith(`${texts.catalogueHeader}\n\n# Case catalogue\n`)).toBe(true);
    expect(markdown).toContain(
      '7 cases in 3 areas. 4 skip one or more columns and 1 cannot run on the reference (`reference: false`)',
    );
  });

  it('lists areas by file and features with their counts', () => {
    expect(markdown).toContain('| [dispatch](#dispatch) | [`cases/dispatch.yaml`](../cases/dispatch.yaml) | 3 |');
    expect(markdown).toContain('| `tool-args` | 2 |');
    expect(markdown).toContain('| `binary-codec` | 1 |');
  });

  it('gives every case its description, features and where it does not run, with the reason', () => {
    expect(markdown).toContain(
      '| [`args-bytes`](../cases/dispatch.yaml#L20) | A Uint8Array argument crosses as bytes | `tool-args` `binary-codec` | **skip on 0.2.2**: the binary codec arrived in 0.3.7 |',
    );
    expect(markdown).toContain(
      '| [`spin-times-out`](../cases/timeouts.yaml#L3) | A busy loop is stopped by the timeout | `timeout` | **reference: false**: a spinning execution would wedge wrangler dev, which enforces no CPU limit on a loaded worker |',
    );
    expect(markdown).toContain('**skip on 0.2.2, 0.3.8, 0.4.4, latest**: spins: would wedge wrangler dev');
    expect(markdown).toContain(
      '| [`result-number`](../cases/results.yaml#L3) | A number comes back as the result | `result-shape` | — |',
    );
  });

  it('orders areas by file name and cases by line, whatever order they were loaded in', () => {
    const shuffled = renderCatalogue([...fixtureCases].reverse(), FIXTURE_ROOT);
    expect(shuffled).toBe(markdown);
    expect(markdown.indexOf('## dispatch')).toBeLessThan(markdown.indexOf('## results'));
    expect(markdown.indexOf('`args-two-numbers`')).toBeLessThan(markdown.indexOf('`args-bytes`'));
  });
});
