/**
 * `npm run matrix`: every case on every column asked for, two columns at a time in report order
 * (a column's long cases still waiting while the next runs), each opened, run and closed by the
 * engine; then the reports. Exit code 0 when the matrix
 * is green (no fail, no infra-error), 1 when it is not, 2 when the run could not be made (a bad
 * option, a malformed catalogue), 130 when it was interrupted.
 */
import { execFileSync } from 'node:child_process';
import { basename, join, relative, resolve, sep } from 'node:path';
import { workerdPlatformPackage } from '../../src/isolate/host/member/workerd-binary.js';
import { messageOf } from '../../src/protocol/index.js';
import {
  COLUMN_IDS,
  type ColumnId,
  DEFAULT_COLUMNS,
  describeColumn,
  RELEASE_COLUMNS,
  RESOLVED_COLUMNS,
  type ReleaseColumnId,
  resolvedRelease,
  useRelease,
  useWorkerd,
  WORKERD_NEWEST,
} from '../columns.js';
import { Engine } from '../engine.js';
import { isFlow } from '../judge.js';
import { type Catalogue, type CatalogueItem, caseTitle, loadCatalogue } from '../load-cases.js';
import { longFirst } from '../long-cases.js';
import { DEFAULT_REGISTRY, resolveRelease, resolveWorkerdRelease } from '../reference/releases.js';
import { cellKey, isFlaky, type MatrixCell, type MatrixColumn, type MatrixRun, summarize } from '../report/model.js';
import { expectsVaryingValues, releaseDiff } from '../report/release-diff.js';
import { reportTexts } from '../report/texts.js';
import { assertValidMatrix, writeReports } from '../report/write-reports.js';
import { INTERPRETING_VERSION, texts } from '../texts.js';
import { involvesTime, withRerun } from '../timing.js';
import { parseColumns, parseCommand, runCommand, stopOnSignals, UsageError } from './common.js';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
/** Where a run writes: ignored by git. `--snapshot` writes the committed copy instead. */
const RUN_DIR = join(REPO_ROOT, 'reports', 'run');
const SNAPSHOT_DIR = join(REPO_ROOT, 'reports');
/** The README's picture of the snapshot's page. */
const REPORT_PICTURE = join(REPO_ROOT, 'docs', 'report.png');
/** Columns whose cases run at once: two cores, and a column's long cases wait without holding its place. */
const COLUMNS_AT_ONCE = 2;
/** Time between count lines in a log. */
const LOG_EVERY_MS = 5000;

/** Exit code with --fail-on-upstream-change when the release diff lists a case. */
const UPSTREAM_CHANGED = 3;

const USAGE = `usage: npm run matrix [-- options]

Runs every case of cases/ on every column and writes the reports. The newest column is the npm
registry's newest @cloudflare/codemode, resolved and installed (outside the lockfile) when the
run starts; when it differs from the release it is compared with, the report opens with the
release diff. ours-workerd-newest is ours on the registry's newest workerd, resolved the same
way; when it differs from the pinned workerd, the report also shows the workerd diff.

  --columns <ids>            only these columns, comma-separated (default: ${DEFAULT_COLUMNS.join(', ')};
                             compare runs only with --compare)
  --newest <version>         pin the newest column to this release, for a reproducible run
  --compare <version>        also run this release (the compare column) and diff newest against it
                             instead of latest
  --fail-on-upstream-change  exit ${UPSTREAM_CHANGED} when the release diff lists any case
  --registry <url>           the npm registry to ask (default: npm's configured one, else ${DEFAULT_REGISTRY})
  --out <dir>                write the reports here (default: reports/run/, which git ignores)
  --snapshot                 write the committed snapshot in reports/ instead
  --cases <dir>              the catalogue directory (default: cases/)
  --build                    run npm run build first, once the options are known good
                             (npm run matrix passes it)
  -h, --help                 print this text

Exit code: 0 green, 1 not green, 2 the run could not be made, ${UPSTREAM_CHANGED} upstream changed
(with --fail-on-upstream-change), 130 interrupted.`;

/** One column in flight: its count, clock and failures. */
interface ColumnProgress {
  started: number;
  done: number;
  total: number;
  failures: number;
  /** A column that did not open, or broke, gives every later cell the same reason: say it once. */
  saidInfra: Set<string>;
}

/**
 * Per column: cases done out of the total, elapsed time, the long cases it is waiting on, and
 * each failure as it happens. Columns overlap (a column's long cases wait while the next one
 * runs), so the count line names each column still in flight. On a terminal it updates in place;
 * elsewhere (a CI log, a pipe) it is printed at most every few seconds and no control character
 * is written.
 */
class Progress {
  private readonly inFlight = new Map<string, ColumnProgress>();
  /** A terminal count line is showing and must be cleared before other output. */
  private pending = false;
  private silent = false;
  /** While only long cases run, nothing else moves the count line: this does. */
  private readonly ticker: NodeJS.Timeout;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly waitingOn: (column: string) => readonly string[],
  ) {
    this.ticker = setInterval(() => this.status(true), this.out.isTTY ? 1000 : LOG_EVERY_MS);
    this.ticker.unref();
  }

  line(text: string): void {
    if (this.pending) this.out.write('\r\x1b[K');
    this.pending = false;
    this.out.write(`${text}\n`);
  }

  /** After Ctrl-C nothing more is printed but the final lines. */
  silence(): void {
    this.silent = true;
    clearInterval(this.ticker);
  }

  stop(): void {
    clearInterval(this.ticker);
  }

  columnStart(column: string, total: number): void {
    if (this.silent) return;
    this.inFlight.set(column, { started: Date.now(), done: 0, total, failures: 0, saidInfra: new Set() });
    this.line(texts.progress.opening(column));
    this.status(true);
  }

  cell(column: string, item: CatalogueItem, cell: MatrixCell): void {
    const state = this.inFlight.get(column);
    if (this.silent || !state) return;
    state.done += 1;
    // The first line of a reason: progress shows the gist; the report keeps all of it.
    const gist = (cell.reason ?? '').split('\n', 1)[0] ?? '';
    if (cell.status === 'fail') {
      this.line(texts.progress.failure(column, caseTitle(item), gist));
      if (cell.diff) this.line(texts.progress.shortDiff(cell.diff));
    }
    if (isFlaky(cell))
      this.line(texts.progress.flaky(column, caseTitle(item), (cell.rerun?.reason ?? '').split('\n', 1)[0] ?? ''));
    if (cell.status === 'infra-error' && !state.saidInfra.has(gist)) {
      state.saidInfra.add(gist);
      this.line(texts.progress.infra(column, `${item.id}: ${gist}`));
    }
    if (cell.status === 'fail' || cell.status === 'infra-error') state.failures += 1;
    this.status(state.done === state.total);
  }

  columnDone(column: MatrixColumn, cells: readonly MatrixCell[]): void {
    const state = this.inFlight.get(column.id);
    this.inFlight.delete(column.id);
    const [summary] = summarize([column], cells).columns;
    if (this.silent || !summary || !state) return;
    const counts = texts.counts(summary.counts, summary.unexpectedPass);
    this.line(texts.progress.columnDone(column.label, counts, Date.now() - state.started));
    this.status();
  }

  /** The count line of every column in flight; in a log, only when `now` (the ticker, a column's start and end). */
  private status(now = false): void {
    if (this.silent || this.inFlight.size === 0) return;
    const text = [...this.inFlight]
      .map(([column, state]) =>
        texts.progress.columnLine(
          column,
          state.done,
          state.total,
          Date.now() - state.started,
          state.failures,
          this.waitingOn(column),
        ),
      )
      .join('  ');
    if (this.out.isTTY) {
      // A line that wraps could not be rewritten in place: it is cut to the terminal's width.
      this.out.write(`\r\x1b[K${text.slice(0, (this.out.columns || 80) - 1)}`);
      this.pending = true;
    } else if (now) {
      this.line(text);
    }
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

/**
 * One column: opened, then every case asked of it at once, through its lane. Resolves once the
 * lane is free (every case started, none holding it), with `done`, which settles when its last case
 * has and the column is closed.
 */
async function startColumn(
  engine: Engine,
  id: ColumnId,
  ordered: readonly CatalogueItem[],
  progress: Progress,
  outcomes: Map<string, unknown>,
): Promise<{ column: MatrixColumn; cells: MatrixCell[]; done: Promise<void> }> {
  const column = { ...engine.describe(id) };
  const columnStarted = Date.now();
  progress.columnStart(id, ordered.length);
  const failure = column.infraError ?? (await engine.open(id));
  if (failure !== undefined) column.infraError = failure;
  const cells: MatrixCell[] = [];
  const ask = async (item: CatalogueItem, index: number) => {
    // A case that involves time may fail once on a loaded machine: only a failure that reproduces counts.
    const { cell, outcome } = await withRerun(
      item,
      () => engine.cell(item, id),
      () => !engine.isAborted,
    );
    cells[index] = cell;
    // The diffs read them: the release diff's reference columns, the workerd diff's two of ours.
    if (outcome !== undefined && (column.kind === 'reference' || id === 'ours' || id === WORKERD_NEWEST))
      outcomes.set(cellKey(item.id, id), outcome);
    progress.cell(id, item, cell);
  };
  // A case known to wait long, or that ran long on an earlier column, starts first here, so its
  // wait overlaps the rest instead of ending the column; the report keeps catalogue order.
  const indexed = ordered.map((item, index) => ({ id: item.id, item, index }));
  const asking = longFirst(indexed, engine.knownLong).map(({ item, index }) => ask(item, index));
  await engine.whenLaneFree(id);
  const done = Promise.all(asking).then(async () => {
    await engine.close(id);
    column.durationMs = Date.now() - columnStarted;
    progress.columnDone(column, cells);
  });
  return { column, cells, done };
}

/**
 * Every case on each column asked for; the run every report is written from. Columns share no
 * process, so `COLUMNS_AT_ONCE` run at a time, taken in report order; a column gives its place to
 * the next once its lane is free, while its long cases still wait (harness/lanes.ts).
 */
async function runMatrix(
  engine: Engine,
  { cases, boundaries }: Catalogue,
  asked: readonly ColumnId[],
  progress: Progress,
): Promise<MatrixRun> {
  const started = new Date();
  const ordered = [...cases].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  const reused = reusedColumns(engine, asked);
  const queue = COLUMN_IDS.filter((column) => asked.includes(column) && !reused.has(column));
  const outcomes = new Map<string, unknown>();
  const slots: Array<{ column: MatrixColumn; cells: MatrixCell[]; done: Promise<void> } | undefined> = [];
  const place = async () => {
    for (let index = slots.length; index < queue.length && !engine.isAborted; index = slots.length) {
      slots[index] = undefined; // Claimed, so the other place takes the next one.
      slots[index] = await startColumn(engine, queue[index]!, ordered, progress, outcomes);
    }
  };
  await Promise.all(Array.from({ length: COLUMNS_AT_ONCE }, place));
  const ran = slots.filter((entry) => entry !== undefined);
  await Promise.all(ran.map((entry) => entry.done));
  progress.stop();
  const ranColumns = ran.map((entry) => entry.column);
  const ranCells = ran.flatMap((entry) => entry.cells);
  // A resolved column whose release another column of the run ran takes that column's cells.
  for (const [id, source] of reused) {
    for (const cell of ranCells.filter((cell) => cell.column === source)) {
      ranCells.push({ ...cell, column: id });
      const outcome = outcomes.get(cellKey(cell.case, source));
      if (outcome) outcomes.set(cellKey(cell.case, id), outcome);
    }
    ranColumns.push({ ...engine.describe(id), sameAs: source });
  }
  const order = (id: string) => COLUMN_IDS.indexOf(id as ColumnId);
  const columns = ranColumns.sort((a, b) => order(a.id) - order(b.id));
  const cells = ranCells.sort((a, b) => order(a.column) - order(b.column));
  const varying = new Set(ordered.filter(expectsVaryingValues).map((item) => item.id));
  const diffs = { caseIds: ordered.map((item) => item.id), cells, outcomes, statusOnly: varying };
  const diff = diffBetween(columns, ['compare', 'latest'], 'newest', 'codemode', diffs);
  const workerdDiff = diffBetween(columns, ['ours'], WORKERD_NEWEST, 'workerd', diffs);
  const status = git(['status', '--porcelain']);
  const commit = git(['rev-parse', 'HEAD'])?.trim();
  const leftOut = DEFAULT_COLUMNS.filter((id) => !asked.includes(id));
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
    ...(diff ? { releaseDiff: diff } : {}),
    ...(workerdDiff ? { workerdDiff } : {}),
    boundaries: [...boundaries.values()],
    columns,
    cases: ordered.map((item) => {
      const file = relative(REPO_ROOT, resolve(item.file)).split(sep).join('/');
      const { id, line, description, features } = item;
      const upstream = isFlow(item) ? undefined : item.upstream;
      // Runtime flows are one area of their own, whichever file holds them.
      const area = isFlow(item) ? 'runtime' : basename(file).replace(/\.ya?ml$/, '');
      return {
        id,
        file,
        line,
        area,
        description,
        features,
        ...(upstream ? { upstreamReason: upstream.reason } : {}),
        ...(involvesTime(item) ? { timing: true as const } : {}),
        ...(!isFlow(item) && item.triage ? { triage: item.triage } : {}),
      };
    }),
    cells,
    summary: summarize(columns, cells),
  };
}

/**
 * Resolved columns whose release another asked reference column runs (newest = the lock's latest,
 * most nights): they are not run twice, and take that column's cells.
 */
function reusedColumns(engine: Engine, asked: readonly ColumnId[]): Map<ColumnId, ColumnId> {
  const reused = new Map<ColumnId, ColumnId>();
  for (const id of RELEASE_COLUMNS) {
    const release = asked.includes(id) ? resolvedRelease(id) : undefined;
    if (!release) continue;
    const same = asked.find(
      (other) =>
        other !== id &&
        !reused.has(other) &&
        !(RESOLVED_COLUMNS as readonly string[]).includes(other) &&
        engine.describe(other).kind === 'reference' &&
        engine.describe(other).versions.codemode === release.version,
    );
    if (same) reused.set(id, same);
  }
  return reused;
}

/**
 * What one column changes against another, by what it runs differently: the release diff (`newest`
 * against `compare` when it ran, else `latest`; by codemode release) and the workerd diff
 * (`ours-workerd-newest` against `ours`; by workerd). None when either did not run, or both ran
 * the same release.
 */
function diffBetween(
  columns: readonly MatrixColumn[],
  fromIds: readonly string[],
  toId: string,
  of: 'codemode' | 'workerd',
  {
    caseIds,
    cells,
    outcomes,
    statusOnly,
  }: {
    caseIds: readonly string[];
    cells: readonly MatrixCell[];
    outcomes: ReadonlyMap<string, unknown>;
    statusOnly: ReadonlySet<string>;
  },
) {
  const usable = (id: string) => columns.find((column) => column.id === id && !column.infraError);
  const to = usable(toId);
  const from = fromIds.map(usable).find((column) => column !== undefined);
  if (!to || !from || to.versions[of] === from.versions[of]) return undefined;
  return releaseDiff(from, to, caseIds, cells, outcomes, statusOnly, of === 'workerd' ? 'workerd' : undefined);
}

/** Resolves each asked resolved column's release; one that cannot be had carries why, and does not run. */
async function resolveColumns(
  asked: readonly ColumnId[],
  pins: Partial<Record<ReleaseColumnId, string>>,
  registry: string,
  progress: Progress,
): Promise<void> {
  const lockVersion = describeColumn('latest').versions.codemode ?? '0.0.0';
  for (const id of RELEASE_COLUMNS) {
    if (!asked.includes(id)) continue;
    const pinned = pins[id];
    try {
      const release = await resolveRelease({ registry, lockVersion, ...(pinned ? { pinned } : {}) });
      useRelease(id, release);
      progress.line(texts.progress.resolved(id, release.version, release.published, release.inPeerRange));
    } catch (error) {
      useRelease(id, { failure: messageOf(error) });
    }
  }
  if (!asked.includes(WORKERD_NEWEST)) return;
  try {
    const release = await resolveWorkerdRelease({
      registry,
      platformPackage: workerdPlatformPackage(),
      pinned: describeColumn('ours').versions.workerd ?? '0.0.0',
    });
    useWorkerd(release);
    progress.line(texts.progress.resolvedWorkerd(release.version, release.published, release.pinned));
  } catch (error) {
    useWorkerd({ failure: messageOf(error) });
  }
}

/** The README's picture of the page follows the snapshot; without Chromium it says so (and a test fails). */
async function refreshPicture(progress: Progress): Promise<void> {
  const png = relative(process.cwd(), REPORT_PICTURE);
  try {
    const { screenshotReport } = await import('../report/browser.js');
    await screenshotReport(SNAPSHOT_DIR, REPORT_PICTURE);
    progress.line(reportTexts.pictureWritten(png));
  } catch (error) {
    progress.line(reportTexts.pictureNotRefreshed(png, messageOf(error)));
  }
}

runCommand(async () => {
  const { values, positionals } = parseCommand(
    process.argv.slice(2),
    {
      columns: { type: 'string' },
      out: { type: 'string' },
      snapshot: { type: 'boolean' },
      cases: { type: 'string' },
      newest: { type: 'string' },
      compare: { type: 'string' },
      registry: { type: 'string' },
      'fail-on-upstream-change': { type: 'boolean' },
      build: { type: 'boolean' },
    },
    USAGE,
  );
  if (positionals.length > 0) throw new UsageError(texts.cli.unexpectedArgument(positionals[0]!, USAGE));
  if (values.snapshot && values.out !== undefined) throw new UsageError(texts.cli.snapshotWithOut);
  const compare = values.compare as string | undefined;
  const columns = parseColumns(values.columns as string | undefined, DEFAULT_COLUMNS, DEFAULT_COLUMNS);
  if (compare !== undefined && (values.columns === undefined || values.columns === 'all')) columns.push('compare');
  if (columns.includes('compare') && compare === undefined) throw new UsageError(texts.cli.compareNeedsRelease);
  const out = values.snapshot ? SNAPSHOT_DIR : typeof values.out === 'string' ? resolve(values.out) : RUN_DIR;
  const catalogue = loadCatalogue(typeof values.cases === 'string' ? resolve(values.cases) : undefined);

  if (values.build) execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });

  const engine = new Engine(catalogue.boundaries);
  const progress = new Progress(process.stdout, (column) => engine.waitingOn(column as ColumnId));
  const pins = { ...(values.newest ? { newest: values.newest as string } : {}), ...(compare ? { compare } : {}) };
  const registry = (values.registry as string | undefined) ?? process.env.npm_config_registry ?? DEFAULT_REGISTRY;
  await resolveColumns(columns, pins, registry, progress);
  stopOnSignals(engine, (line) => {
    progress.silence();
    progress.line(line);
  });
  const run = await runMatrix(engine, catalogue, columns, progress);
  if (engine.isAborted) return new Promise<number>(() => {}); // The signal handler exits.
  await engine.closeAll();
  assertValidMatrix(JSON.parse(JSON.stringify(run)));
  // A fresh clone has no run of its own yet: the first one is compared with the committed snapshot.
  writeReports(run, out, out === SNAPSHOT_DIR ? undefined : join(SNAPSHOT_DIR, 'history'));
  progress.line(texts.progress.written(relative(process.cwd(), out) || '.'));
  if (values.snapshot) await refreshPicture(progress);
  progress.line(texts.progress.verdict(run.summary.green));
  if (run.releaseDiff) progress.line(texts.progress.releaseDiff(run.releaseDiff));
  if (run.workerdDiff) progress.line(texts.progress.releaseDiff(run.workerdDiff));
  if (values['fail-on-upstream-change'] && (run.releaseDiff?.rows.length ?? 0) > 0) return UPSTREAM_CHANGED;
  return run.summary.green ? 0 : 1;
});
