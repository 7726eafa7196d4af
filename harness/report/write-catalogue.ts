/**
 * `reports/catalogue.md`, generated from `cases/` alone: every case with its description, area,
 * features, and where it does not run (skipOn per release, reference: false), with the reasons.
 * Deterministic, so a test can compare it with the committed file.
 */
import type { LoadedCase } from '../case-model.js';
import { areaOf, catalogueOrder, repoRelative } from './case-entry.js';
import { markdownCell, markdownCode } from './format.js';
import { texts } from './texts.js';

function notRunOn(testCase: LoadedCase): string {
  const notes: string[] = [];
  if (testCase.reference === false) notes.push(`**reference: false**: ${markdownCell(testCase.reason ?? '')}`);
  for (const skip of testCase.skipOn ?? [])
    notes.push(`**skip on ${skip.versions.map(markdownCell).join(', ')}**: ${markdownCell(skip.reason)}`);
  return notes.join('<br>') || '—';
}

export function renderCatalogue(loaded: readonly LoadedCase[], repoRoot: string): string {
  const cases = catalogueOrder(
    loaded.map((testCase) => ({ ...testCase, file: repoRelative(testCase.file, repoRoot) })),
  );
  const areas = new Map<string, { file: string; cases: LoadedCase[] }>();
  const features = new Map<string, number>();
  for (const testCase of cases) {
    const area = areaOf(testCase.file);
    const entry = areas.get(area) ?? { file: testCase.file, cases: [] };
    entry.cases.push(testCase);
    areas.set(area, entry);
    for (const feature of testCase.features) features.set(feature, (features.get(feature) ?? 0) + 1);
  }
  const skipped = cases.filter((testCase) => testCase.skipOn?.length).length;
  const unsupported = cases.filter((testCase) => testCase.reference === false).length;

  const lines: string[] = [
    texts.catalogueHeader,
    '',
    '# Case catalogue',
    '',
    `${cases.length} cases in ${areas.size} areas. ${skipped} skip one or more columns and ${unsupported} cannot run on the reference (\`reference: false\`); the reason is given beside each.`,
    '',
    'Columns are named as `skipOn` names them: `ours` (in-process), `ours-remote` (over `connect()` to a daemon), and each reference release (`0.2.2`, `0.3.8`, `0.4.4`, `latest` = the newest).',
    '',
    '## Areas',
    '',
    '| area | file | cases |',
    '|---|---|---:|',
  ];
  for (const [area, entry] of areas)
    lines.push(
      `| [${area}](#${anchor(area)}) | [${markdownCode(entry.file)}](../${entry.file}) | ${entry.cases.length} |`,
    );
  lines.push('', '## Features', '', '| feature | cases |', '|---|---:|');
  for (const [feature, count] of [...features].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    lines.push(`| ${markdownCode(feature)} | ${count} |`);
  for (const [area, entry] of areas) {
    lines.push(
      '',
      `## ${area}`,
      '',
      `From [${markdownCode(entry.file)}](../${entry.file}), ${entry.cases.length} cases.`,
      '',
    );
    lines.push('| case | description | features | not run on |', '|---|---|---|---|');
    for (const testCase of entry.cases) {
      lines.push(
        `| [${markdownCode(testCase.id)}](../${testCase.file}#L${testCase.line}) | ${markdownCell(testCase.description)} | ${testCase.features.map(markdownCode).join(' ')} | ${notRunOn(testCase)} |`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}

/** GitHub's heading anchor for a plain area name. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}
