/**
 * `npm run fuzz -- [--seed n] [--count n] [--column id] [--budget-seconds s] [--out dir]`: generated
 * programs on ours and on a reference column, every new difference shrunk into a draft case
 * (docs/fuzzing.md). Exit code 0 when nothing new differs, 1 when a new draft was written, 2 on a
 * bad option.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { type ColumnId, REFERENCE_COLUMNS } from '../columns.js';
import { nightSeed } from '../fuzz/generator.js';
import { runFuzz } from '../fuzz/run.js';
import { fuzzTexts } from '../fuzz/texts.js';
import { FUZZ_SUMMARY_FILE } from '../report/fuzz-section.js';
import { parseCommand, runCommand, stopOnSignals, UsageError } from './common.js';

/** What ours can be compared with: a reference release, or ours over the daemon. */
const COMPARABLE: readonly ColumnId[] = [...REFERENCE_COLUMNS, 'ours-remote'];
const ROOT = resolve(import.meta.dirname, '..', '..');

const USAGE = `usage: npm run fuzz -- [--seed <n>] [--count <n>] [--column <id>] [--budget-seconds <s>] [--out <dir>]

Generates programs in the Code Mode dialect, runs each on ours and on a reference column, and
shrinks every new difference into a draft case in cases/drafts/ (docs/fuzzing.md).

  --seed <n>             the programs' seed (default: today's UTC date, e.g. ${nightSeed()}); the same seed
                         gives the same programs
  --count <n>            how many programs (default 500)
  --column <id>          the column ours is compared with (default latest); one of ${COMPARABLE.join(', ')}
  --budget-seconds <s>   start no program and no shrinking after this long (default: no budget)
  --out <dir>            where fuzz.json, the run's figures for the report, is written (default reports/run)
  --drafts <dir>         where drafts are written (default cases/drafts)
  -h, --help             print this text

Exit code: 0 nothing new differs, 1 a new draft was written, 2 a bad option.`;

function positiveInteger(flag: string, value: string | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(fuzzTexts.badInteger(flag, value));
  return Number(value);
}

runCommand(async () => {
  const { values } = parseCommand(
    process.argv.slice(2),
    {
      seed: { type: 'string' },
      count: { type: 'string' },
      column: { type: 'string' },
      'budget-seconds': { type: 'string' },
      out: { type: 'string' },
      drafts: { type: 'string' },
    },
    USAGE,
  );
  const seedText = values.seed as string | undefined;
  if (seedText !== undefined && !/^-?\d+$/.test(seedText)) throw new UsageError(fuzzTexts.badSeed(seedText));
  const seed = seedText === undefined ? nightSeed() : Number(seedText);
  const count = positiveInteger('--count', values.count as string | undefined, 500)!;
  const budgetSeconds = positiveInteger('--budget-seconds', values['budget-seconds'] as string | undefined, undefined);
  const column = (values.column as string | undefined) ?? 'latest';
  if (!(COMPARABLE as readonly string[]).includes(column))
    throw new UsageError(fuzzTexts.badColumn(column, COMPARABLE));
  const out = resolve((values.out as string | undefined) ?? join(ROOT, 'reports', 'run'));
  const draftsDir = resolve((values.drafts as string | undefined) ?? join(ROOT, 'cases', 'drafts'));

  const summary = await runFuzz({
    seed,
    count,
    column: column as ColumnId,
    draftsDir,
    onEngine: (engine) => stopOnSignals(engine, (line) => console.log(line)),
    ...(budgetSeconds === undefined ? {} : { budgetSeconds }),
  });
  mkdirSync(out, { recursive: true });
  // The report beside fuzz.json links each draft, so its path is written relative to that directory.
  const written = {
    ...summary,
    differences: summary.differences.map((difference) => ({
      ...difference,
      draft: relative(out, resolve(difference.draft)).split(sep).join('/'),
    })),
  };
  writeFileSync(join(out, FUZZ_SUMMARY_FILE), `${JSON.stringify(written, null, 2)}\n`);
  const known = Object.values(summary.known).reduce((sum, n) => sum + n, 0);
  const newDrafts = summary.differences.filter((difference) => difference.isNew).length;
  console.log(fuzzTexts.throughput('ours', summary.sidePrograms.ours, summary.busyMs.ours));
  console.log(fuzzTexts.throughput(column, summary.sidePrograms.reference, summary.busyMs.reference));
  console.log(
    fuzzTexts.summary(
      seed,
      column,
      summary.ran,
      count,
      known,
      summary.flaky,
      summary.differences.length,
      newDrafts,
      summary.notRun,
      summary.durationMs / 1000,
    ),
  );
  return newDrafts === 0 ? 0 : 1;
});
