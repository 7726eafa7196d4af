/**
 * Progress while the matrix runs: the column, cases done/total, elapsed time, and each failure as it
 * happens. On a terminal the count line updates in place; in a log it is printed at most every few
 * seconds, so CI output stays short.
 */
import { texts } from '../texts.js';

export interface Progress {
  columnStart(column: string, total: number): void;
  step(column: string, done: number, total: number, failures: number): void;
  failure(column: string, file: string, caseId: string, reason: string): void;
  infra(column: string, reason: string): void;
  columnDone(column: string, counts: string): void;
  line(text: string): void;
}

export interface ProgressOptions {
  write(text: string): void;
  isTTY: boolean;
  now?: () => number;
  /** Minimum time between count lines in a log. */
  logEveryMs?: number;
}

/** The first line of a reason: progress shows the gist; the report keeps all of it. */
function gist(reason: string): string {
  return reason.split('\n', 1)[0] ?? '';
}

export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const every = options.logEveryMs ?? 5000;
  const started = new Map<string, number>();
  let lastLog = 0;
  let pending = false; // a TTY count line is showing and must be cleared before other output

  const print = (text: string) => {
    if (pending) options.write('\r\x1b[K');
    pending = false;
    options.write(`${text}\n`);
  };
  const elapsed = (column: string) => now() - (started.get(column) ?? now());

  return {
    columnStart(column, total) {
      started.set(column, now());
      lastLog = now();
      print(texts.progress.columnStart(column, total));
    },
    step(column, done, total, failures) {
      const text = texts.progress.columnLine(column, done, total, elapsed(column), failures);
      if (options.isTTY) {
        options.write(`\r\x1b[K${text}`);
        pending = true;
      } else if (now() - lastLog >= every || done === total) {
        lastLog = now();
        print(text);
      }
    },
    failure(column, file, caseId, reason) {
      print(texts.progress.failure(column, file, caseId, gist(reason)));
    },
    infra(column, reason) {
      print(texts.progress.infra(column, gist(reason)));
    },
    columnDone(column, counts) {
      print(texts.progress.columnDone(column, counts, elapsed(column)));
    },
    line(text) {
      print(text);
    },
  };
}
