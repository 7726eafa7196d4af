/**
 * Refusal lines, bounded: a flood of refusals of one kind (a client hammering the daemon) would
 * otherwise write a line each and drown the log. Each kind logs its first lines of a window; the
 * rest are counted and summed up in one line when the window closes.
 */

import { formatRefusalsSuppressed, type RefusedThing } from '../texts.js';
import type { LogSink } from './log.js';

/** Lines per kind per window; past it they are counted and summed up in one line. */
const LINES_PER_WINDOW = 10;
const WINDOW_MS = 10_000;

export class RefusalLog {
  readonly #log: LogSink;
  readonly #thing: RefusedThing;
  readonly #window = new Map<string, { logged: number; suppressed: number }>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(log: LogSink, thing: RefusedThing) {
    this.#log = log;
    this.#thing = thing;
  }

  /** Logs `line`, unless this window already logged its share of `kind`. */
  refused(kind: string, line: string): void {
    const window = this.#window.get(kind) ?? { logged: 0, suppressed: 0 };
    this.#window.set(kind, window);
    if (window.logged < LINES_PER_WINDOW) {
      window.logged += 1;
      this.#log(line, 'warn');
    } else {
      window.suppressed += 1;
    }
    this.#timer ??= setTimeout(() => this.#closeWindow(), WINDOW_MS);
    this.#timer.unref();
  }

  /** Logs what the current window held back, at once (the server is closing). */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#closeWindow();
  }

  #closeWindow(): void {
    this.#timer = undefined;
    for (const [kind, window] of this.#window) {
      if (window.suppressed > 0)
        this.#log(formatRefusalsSuppressed(this.#thing, window.suppressed, kind, WINDOW_MS), 'warn');
    }
    this.#window.clear();
  }
}
