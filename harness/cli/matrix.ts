/**
 * `npm run matrix`: every case on every column asked for, one column after another in report
 * order, each opened, run and closed by the engine; then the reports. Exit code 0 when the matrix
 * is green (no fail, no infra-error), 1 when it is not, 2 when the run could not be made (a bad
 * option, a malformed catalogue), 130 when it was interrupted.
 */
import { execFileSync } from 'node:child_process';
import { basename, join, relative, resolve, sep } from 'node:path';
import { COLUMN_IDS, type ColumnId } from '../columns.js';
import { Engine } from '../engine.js';
import { isFlow } from '../judge.js';
import { type Catalogue, type CatalogueItem, caseTitle, loadCatalogue } from '../load-cases.js';
import { type MatrixCell, type MatrixColumn, type MatrixRun, summarize } from '../report/model.js';
import { assertValidMatrix, writeReports } from '../report/write-reports.js';
import { INTERPRETING_VERSION, texts } from '../texts.js';
import { parseColumns, parseCommand, runCommand, stopOnSignals, UsageError } from './common.js';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
/** Where a run writes: ignored by git. `--snapshot` writes the committed copy instead. */
const RUN_DIR = join(REPO_ROOT, 'reports', 'run');
const SNAPSHOT_DIR = join(REPO_ROOT, 'reports');
/** Minimum time between count lines in a log. */
const LOG_EVERY_MS = 5000;

const USAGE = `usage: npm run matrix [-- options]

Runs every case of cases/ on every column and writes the reports.

  --columns <ids>   only these columns, comma-separated (default: all of ${COLUMN_IDS.join(', ')})
  --out <dir>       write the reports here (default: reports/run/, which git ignores)
  --snapshot        write the committed snapshot in reports/ instead
  --cases <dir>     the catalogue directory (default: cases/)
  -h, --help        print this text

Exit code: 0 green, 1 not green, 2 the run could not be made, 130 interrupted.`;

/**
 * Per column: cases done out of the total, elapsed time, and each failure as it happens. On a
 * terminal the count line updates in place; elsewhere (a CI log, a pipe) it is printed at most
 * every few seconds and no control character is written.
 */
class Progress {
  private started = 0;
  private lastLog = 0;
  private failures = 0;
  /** A terminal count line is showing and must be cleared before other output. */
  private pending = false;
  private silent = false;
  /** A column that did not open, or broke, gives every later cell the same reason: say it once. */
  private readonly saidInfra = new Set<string>();

  constructor(private readonly out: NodeJS.WriteStream) {}

  line(text: string): void {
    if (this.pending) this.out.write('\r\x1b[K');
    this.pending = false;
    this.out.write(`${text}\n`);
  }

  /** After Ctrl-C nothing more is printed but the final lines. */
  silence(): void {
    this.silent = true;
  }

  columnStart(column: string, total: number): void {
    if (this.silent) return;
    this.started = this.lastLog = Date.now();
    this.failures = 0;
    this.saidInfra.clear();
    this.line(texts.progress.opening(column));
    this.line(texts.progress.columnLine(column, 0, total, 0, 0));
  }

  cell(column: string, item: CatalogueItem, cell: MatrixCell, done: number, total: number): void {
    if (this.silent) return;
    // The first line of a reason: progress shows the gist; the report keeps all of it.
    const gist = (cell.reason ?? '').split('\n', 1)[0] ?? '';
    if (cell.status === 'fail') this.line(texts.progress.failure(column, caseTitle(item), gist));
    if (cell.status === 'infra-error' && !this.saidInfra.has(gist)) {
      this.saidInfra.add(gist);
      this.line(texts.progress.infra(column, `${item.id}: ${gist}`));
    }
    if (cell.status === 'fail' || cell.status === 'infra-error') this.failures += 1;
    const text = texts.progress.columnLine(column, done, total, Date.now() - this.started, this.failures);
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[K${text}`);
      this.pending = true;
    } else if (Date.now() - this.lastLog >= LOG_EVERY_MS || done === total) {
      this.lastLog = Date.now();
      this.line(text);
    }
  }

  columnDone(column: MatrixColumn, cells: readonly MatrixCell[]): void {
    const [summary] = summarize([column], cells).columns;
    if (this.silent || !summary) return;
    const counts = texts.counts(summary.counts, summary.unexpectedPass);
    this.line(texts.progress.columnDone(column.label, counts, Date.now() - this.started));
  }
}

function git(args: string[]): string | undefined {
  try {
    // --no-optional-locks: `status` must not refresh (write) the index.
    return execFileSync('git', ['--no-optional-locks', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
}

/** Every case on each column asked for, in report order; the run every report is written from. */
async function runMatrix(
  engine: Engine,
  { cases, boundaries }: Catalogue,
  asked: readonly ColumnId[],
  progress: Progress,
): Promise<MatrixRun> {
  const started = new Date();
  const ordered = [...cases].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  const columns: MatrixColumn[] = [];
  const cells: MatrixCell[] = [];
  for (const id of COLUMN_IDS.filter((column) => asked.includes(column))) {
    if (engine.isAborted) break;
    const column = { ...engine.describe(id) };
    columns.push(column);
    const columnStarted = Date.now();
    progress.columnStart(id, ordered.length);
    const failure = column.infraError ?? (await engine.open(id));
    if (failure !== undefined) column.infraError = failure;
    const own: MatrixCell[] = [];
    for (const item of ordered) {
      if (engine.isAborted) break;
      const { cell } = await engine.cell(item, id);
      own.push(cell);
      progress.cell(id, item, cell, own.length, ordered.length);
    }
    await engine.close(id);
    column.durationMs = Date.now() - columnStarted;
    cells.push(...own);
    progress.columnDone(column, own);
  }
  const status = git(['status', '--porcelain']);
  const commit = git(['rev-parse', 'HEAD'])?.trim();
  const leftOut = COLUMN_IDS.filter((id) => !asked.includes(id));
  return {
    schemaVersion: 2,
    run: {
      date: started.toISOString(),
      durationMs: Date.now() - started.getTime(),
      commit: commit && /^[0-9a-f]{7,64}$/.test(commit) ? commit : null,
      dirty: status === undefined ? null : status.trim().length > 0,
      node: process.version,
      interpreting: INTERPRETING_VERSION,
      ...(leftOut.length ? { columnsLeftOut: leftOut } : {}),
    },
    boundaries: [...boundaries.values()],
    columns,
    cases: ordered.map((item) => {
      const file = relative(REPO_ROOT, resolve(item.file)).split(sep).join('/');
      const { id, line, description, features } = item;
      const upstream = isFlow(item) ? undefined : item.upstream;
      // Runtime flows are one area of their own, whichever file holds them.
      const area = isFlow(item) ? 'runtime' : basename(file).replace(/\.ya?ml$/, '');
      return { id, file, line, area, description, features, ...(upstream ? { upstreamReason: upstream.reason } : {}) };
    }),
    cells,
    summary: summarize(columns, cells),
  };
}

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
  const progress = new Progress(process.stdout);
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
