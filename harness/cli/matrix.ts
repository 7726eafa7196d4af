/**
 * `npm run matrix`: every case on every column, then the reports. Exit code 0 when the matrix is
 * green (no fail, no infra-error), 1 when it is not, 2 when the run could not be made (a bad
 * option, a malformed catalogue), 130 when it was interrupted.
 */
import { join, relative, resolve } from 'node:path';
import { COLUMN_IDS } from '../columns.js';
import { Engine } from '../engine.js';
import { loadCatalogue } from '../load-cases.js';
import { REPO_ROOT, runMatrix } from '../matrix.js';
import { assertValidMatrix, writeReports } from '../report/write-reports.js';
import { texts } from '../texts.js';
import { parseColumns, parseCommand, runCommand, stopOnSignals, UsageError } from './common.js';
import { createProgress } from './progress.js';

/** Where a run writes: ignored by git. `--snapshot` writes the committed copy instead. */
const RUN_DIR = join(REPO_ROOT, 'reports', 'run');
const SNAPSHOT_DIR = join(REPO_ROOT, 'reports');

const USAGE = `usage: npm run matrix [-- options]

Runs every case of cases/ on every column and writes the reports.

  --columns <ids>   only these columns, comma-separated (default: all of ${COLUMN_IDS.join(', ')})
  --out <dir>       write the reports here (default: reports/run/, which git ignores)
  --snapshot        write the committed snapshot in reports/ instead
  --cases <dir>     the catalogue directory (default: cases/)
  -h, --help        print this text

Exit code: 0 green, 1 not green, 2 the run could not be made, 130 interrupted.`;

runCommand(async () => {
  const { values, positionals } = parseCommand(
    process.argv.slice(2),
    { columns: { type: 'string' }, out: { type: 'string' }, snapshot: { type: 'boolean' }, cases: { type: 'string' } },
    USAGE,
  );
  if (positionals.length > 0) throw new UsageError(texts.cli.unexpectedArgument(positionals[0]!, USAGE));
  if (values.snapshot && values.out !== undefined) throw new UsageError(texts.cli.snapshotWithOut);
  const columns = parseColumns(values.columns as string | undefined, COLUMN_IDS);
  const out = values.snapshot ? SNAPSHOT_DIR : typeof values.out === 'string' ? resolve(values.out) : RUN_DIR;
  const catalogue = loadCatalogue(typeof values.cases === 'string' ? resolve(values.cases) : undefined);

  const engine = new Engine(catalogue.boundaries);
  const progress = createProgress({
    write: (text) => process.stdout.write(text),
    isTTY: Boolean(process.stdout.isTTY),
  });
  stopOnSignals(engine, (line) => {
    progress.silence();
    progress.line(line);
  });
  const run = await runMatrix(engine, catalogue, columns, progress);
  if (engine.isAborted) return new Promise<number>(() => {}); // The signal handler exits.
  await engine.closeAll();
  assertValidMatrix(JSON.parse(JSON.stringify(run)));
  writeReports(run, out);
  progress.line(texts.progress.written(relative(process.cwd(), out) || '.'));
  progress.line(texts.progress.verdict(run.summary.green));
  return run.summary.green ? 0 : 1;
});
