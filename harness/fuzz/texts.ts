/** Every text `npm run fuzz` composes: progress, the summary line, drafts, refusals. */
import type { FuzzOrigin } from '../case-model.js';

const minutes = (ms: number) => `${(ms / 1000).toFixed(0)}s`;

export const fuzzTexts = {
  progress: (ours: number, reference: number, total: number, elapsedMs: number) =>
    `[fuzz] ${minutes(elapsedMs)} · ours ${ours}/${total} · reference ${reference}/${total} programs`,
  difference: (signature: string, index: number, draft: string, isNew: boolean, diff: string) =>
    `[fuzz] ✗ differs (${signature}), first at program ${index}; shrunk into ${draft}${isNew ? '' : ' (already drafted)'}\n${diff}`,
  summary: (
    seed: number,
    column: string,
    ran: number,
    asked: number,
    known: number,
    flaky: number,
    newKinds: number,
    newDrafts: number,
    notRun: number,
    seconds: number,
  ) =>
    `fuzz: seed ${seed}, ${ran}/${asked} programs on ours and ${column} in ${seconds.toFixed(0)}s: ` +
    `${known} documented difference(s), ${flaky} flaky, ${newKinds - newDrafts} kind(s) already drafted, ${newDrafts} new draft(s)` +
    (notRun > 0 ? `, ${notRun} not run (infra-error)` : ''),
  throughput: (side: string, programs: number, busyMs: number) =>
    `fuzz: ${side}: ${programs} programs in ${minutes(busyMs)}, ${busyMs > 0 ? ((programs * 60_000) / busyMs).toFixed(0) : '∞'} per minute`,
  columnDidNotOpen: (column: string, why: string) => `fuzz: the column ${column} did not open: ${why}`,
  notReplayed: (signature: string) =>
    `fuzz: replaying the seed did not reach the program that differed (${signature}); fast-check's sampling and check disagree`,
  untriaged:
    'Not triaged: found by npm run fuzz. Fix ours and promote the case without upstream, or write here why we differ on purpose (docs/fuzzing.md).',
  draftDescription: (column: string, fields: readonly string[]) =>
    `A generated program on which ours and ${column} differ in ${fields.join(', ')}.`,
  draftHeader: (origin: Omit<FuzzOrigin, 'found'>) =>
    `# A draft from npm run fuzz -- --seed ${origin.seed} --column ${origin.column} (program ${origin.index}, shrunk).\n` +
    '# It is not part of the catalogue: docs/fuzzing.md says how to promote it.',
  badInteger: (flag: string, value: string) => `${flag} must be a whole number of at least 1, got "${value}"`,
  badSeed: (value: string) => `--seed must be an integer, got "${value}"`,
  badColumn: (value: string, columns: readonly string[]) =>
    `--column ${value} is not a column ours can be compared with; the columns are: ${columns.join(', ')}`,
};
