/**
 * The matrix's progress: per column, cases done out of the total, elapsed time, and each failure
 * as it happens. On a terminal the count line updates in place; elsewhere (a CI log, a pipe) it is
 * printed at most every few seconds and no control character is written.
 */
import { caseTitle } from '../load-cases.js';
import type { MatrixProgress } from '../matrix.js';
import { summarize } from '../report/model.js';
import { texts } from '../texts.js';

export interface ProgressOptions {
  write(text: string): void;
  isTTY: boolean;
  now?: () => number;
  /** Minimum time between count lines in a log. */
  logEveryMs?: number;
}

export interface Progress extends MatrixProgress {
  line(text: string): void;
  /** After Ctrl-C nothing more is printed but the final lines. */
  silence(): void;
}

/** The first line of a reason: progress shows the gist; the report keeps all of it. */
const gist = (reason: string | undefined) => (reason ?? '').split('\n', 1)[0] ?? '';

export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const every = options.logEveryMs ?? 5000;
  let started = now();
  let lastLog = 0;
  let failures = 0;
  let pending = false; // a terminal count line is showing and must be cleared before other output
  let silent = false;
  /** A column that did not open, or broke, gives every later cell the same reason: say it once. */
  const saidInfra = new Set<string>();

  const print = (text: string) => {
    if (pending) options.write('\r\x1b[K');
    pending = false;
    options.write(`${text}\n`);
  };

  return {
    columnStart(column, total) {
      if (silent) return;
      started = now();
      lastLog = started;
      failures = 0;
      saidInfra.clear();
      print(texts.progress.opening(column));
      print(texts.progress.columnLine(column, 0, total, 0, 0));
    },
    cell(column, item, cell, done, total) {
      if (silent) return;
      if (cell.status === 'fail') {
        failures += 1;
        print(texts.progress.failure(column, caseTitle(item), gist(cell.reason)));
      } else if (cell.status === 'infra-error') {
        failures += 1;
        if (!saidInfra.has(gist(cell.reason))) print(texts.progress.infra(column, `${item.id}: ${gist(cell.reason)}`));
        saidInfra.add(gist(cell.reason));
      }
      const text = texts.progress.columnLine(column, done, total, now() - started, failures);
      if (options.isTTY) {
        options.write(`\r\x1b[K${text}`);
        pending = true;
      } else if (now() - lastLog >= every || done === total) {
        lastLog = now();
        print(text);
      }
    },
    columnDone(column, cells) {
      if (silent) return;
      const [summary] = summarize([column], cells).columns;
      if (summary)
        print(
          texts.progress.columnDone(
            column.label,
            texts.counts(summary.counts, summary.unexpectedPass),
            now() - started,
          ),
        );
    },
    line(text) {
      print(text);
    },
    silence() {
      silent = true;
    },
  };
}
