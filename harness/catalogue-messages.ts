/** Every text the catalogue spec composes: side failures, the reference tripwire, titles, the summary. */

/** A case whose test carries its skip reason in its title, so the reason shows wherever the name does. */
export function skippedTitle(title: string, reason: string): string {
  return `${title} [skipped: ${reason}]`;
}

export function sideDidNotStart(side: string, why: string): string {
  return `The ${side} side did not start, so none of its cases ran (an infrastructure failure, not a case result):\n${why}`;
}

export function sideBroke(side: string, caseId: string, why: string): string {
  return `The ${side} side broke during the run, at case "${caseId}" (an infrastructure failure, not a case result):\n${why}`;
}

/** The summary's line for a side in trouble: what happened, and the first line of why. */
export function troubleLine(side: string, what: string, why: string): string {
  return `${side} ${what}: ${why.split('\n').find((line) => line.trim() !== '') ?? ''}`;
}

/** Appended to a reference column's failure: the end of what wrangler printed. */
export function withOutput(message: string, output: string): string {
  return output.trim() === '' ? message : `${message}\nThe end of its wrangler output:\n${output}`;
}

/** The reference callback of the `reference: false` describe: anything calling it is a harness bug. */
export function referenceCalledForStandalone(caseId: string): string {
  return `${caseId}: a reference: false case asked for a reference outcome; the standalone path must never call the reference`;
}

export const SUMMARY_TITLE = 'Catalogue summary';
