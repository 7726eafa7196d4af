/**
 * The report's fuzzing section, from the `fuzz.json` that `npm run fuzz` wrote into the same
 * reports directory (the nightly runs it before the matrix): programs run, differences found, and
 * each new draft linked to its case file. No file, no section.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FuzzSummary } from '../fuzz/run.js';
import { reportTexts as t } from './texts.js';

export const FUZZ_SUMMARY_FILE = 'fuzz.json';

/** The fuzz run written beside the report, if any. */
export function readFuzzSummary(reportsDir: string): FuzzSummary | undefined {
  const file = join(reportsDir, FUZZ_SUMMARY_FILE);
  if (!existsSync(file)) return undefined;
  const summary = JSON.parse(readFileSync(file, 'utf8')) as FuzzSummary;
  if (typeof summary.seed !== 'number' || !Array.isArray(summary.differences))
    throw new Error(t.fuzzBadFile(file, 'no seed or no differences'));
  return summary;
}

function line(summary: FuzzSummary): string {
  const known = Object.values(summary.known).reduce((sum, n) => sum + n, 0);
  const differences = known + summary.flaky + summary.differences.length;
  return t.fuzzLine(summary.seed, summary.column, summary.ran, summary.asked, differences, known, summary.flaky);
}

const newDrafts = (summary: FuzzSummary) => summary.differences.filter((difference) => difference.isNew);

/** The section in matrix.md; each draft's link is relative to the report (fuzz.json records it so). */
export function fuzzMarkdown(summary: FuzzSummary | undefined): string[] {
  if (!summary) return [];
  const drafts = newDrafts(summary);
  return [
    `## ${t.fuzzTitle}`,
    '',
    line(summary),
    '',
    drafts.length ? t.fuzzDrafts(drafts.length) : t.fuzzNoDrafts,
    '',
    ...drafts.map(
      (draft) =>
        `- [\`${draft.draft.split('/').pop()}\`](${draft.draft}): ${t.fuzzDraft(draft.signature, draft.index)}`,
    ),
    ...(drafts.length ? [''] : []),
  ];
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The same on the page, written into it as it is built. */
export function fuzzHtml(summary: FuzzSummary | undefined): string {
  if (!summary) return '';
  const drafts = newDrafts(summary);
  const items = drafts
    .map(
      (draft) =>
        `<li><a href="${escapeHtml(draft.draft)}"><code>${escapeHtml(draft.draft.split('/').pop() ?? draft.draft)}</code></a>: ${escapeHtml(t.fuzzDraft(draft.signature, draft.index))}</li>`,
    )
    .join('');
  return (
    `<section id="fuzz" class="fuzz" aria-labelledby="fuzz-title"><h2 id="fuzz-title">${t.fuzzTitle}</h2>` +
    `<p>${escapeHtml(line(summary))}</p><p>${escapeHtml(drafts.length ? t.fuzzDrafts(drafts.length) : t.fuzzNoDrafts)}</p>` +
    (items ? `<ul>${items}</ul>` : '') +
    '</section>'
  );
}
