/**
 * `npm run matrix`: runs the whole catalogue on ours (in-process), on ours-remote when the remote
 * sources exist, and on every reference column, printing progress; then writes reports/
 * (matrix.json, index.html, matrix.md, catalogue.md, badge.json, history/).
 *
 *   npm run matrix [-- --columns ours,latest] [--out <dir>]
 *
 * Exit code: 0 when the matrix is green (no fail, no infra-error), 1 when it is not, 2 when the
 * run itself could not be made (a malformed catalogue, a bad option).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { countsLine } from '../report/format.js';
import { REPO_ROOT, REPORTS_DIR } from '../report/paths.js';
import { createProgress } from '../report/runner/progress.js';
import { runningColumns } from '../report/runner/run-column.js';
import { runMatrix } from '../report/runner/run-matrix.js';
import { texts } from '../report/texts.js';
import { assertValidMatrix } from '../report/validate-matrix.js';
import { renderCatalogue } from '../report/write-catalogue.js';
import { writeReports } from '../report/write-reports.js';

const USAGE = 'usage: npm run matrix [-- --columns ours,ours-remote,0.2.2,0.3.8,0.4.4,latest] [--out <dir>]';

interface Arguments {
  columns: string[] | undefined;
  out: string;
}

function parseArguments(argv: readonly string[]): Arguments {
  const args: Arguments = { columns: undefined, out: REPORTS_DIR };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith('--')) throw new Error(`${arg} needs a value\n${USAGE}`);
      return next;
    };
    if (arg === '--columns') args.columns = value().split(',').filter(Boolean);
    else if (arg === '--out') args.out = resolve(value());
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`Unknown argument ${arg}\n${USAGE}`);
  }
  return args;
}

/** Stops every running column (wrangler dev, workerd, the daemon) before an interrupted run exits. */
function stopOnSignals(print: (line: string) => void): void {
  const stop = (signal: NodeJS.Signals) => {
    print(texts.progress.interrupted(signal));
    void Promise.allSettled([...runningColumns].map((column) => column.stop())).then(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(): Promise<number> {
  const args = parseArguments(process.argv.slice(2));
  const progress = createProgress({
    write: (text) => process.stdout.write(text),
    isTTY: Boolean(process.stdout.isTTY),
  });
  stopOnSignals((line) => progress.line(line));

  const { run, cases } = await runMatrix({ progress, ...(args.columns ? { columns: args.columns } : {}) });
  assertValidMatrix(JSON.parse(JSON.stringify(run)));

  mkdirSync(args.out, { recursive: true });
  writeReports(run, args.out);
  writeFileSync(join(args.out, 'catalogue.md'), renderCatalogue(cases, REPO_ROOT));

  progress.line('');
  for (const summary of run.summary.columns) {
    const column = run.columns.find((entry) => entry.id === summary.column);
    progress.line(texts.progress.summaryLine(column?.label ?? summary.column, countsLine(summary)));
  }
  progress.line(texts.progress.written(relative(process.cwd(), args.out) || '.'));
  progress.line(texts.progress.verdict(run.summary.green));
  return run.summary.green ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(2);
  },
);
