/**
 * A process-wide check: an unhandled rejection or an uncaught exception anywhere in the library
 * fails the test during which it happened, naming it. (Vitest reports such errors once for the
 * whole run; a real host would die of them.)
 */
import { afterEach, expect } from 'vitest';

// Files share a process (test/support/process-sharing.ts) and this file runs again for each of
// them: the listeners are added once per process, into one list.
const UNHANDLED = Symbol.for('codemode.test.unhandled');
interface Seen {
  readonly list: unknown[];
  /** The file whose test was checked last in this process. */
  lastFile?: string | undefined;
}
const store = globalThis as { [UNHANDLED]?: Seen };
const seen = (store[UNHANDLED] ??= (() => {
  const list: unknown[] = [];
  process.on('unhandledRejection', (reason) => list.push(reason));
  process.on('uncaughtException', (error) => list.push(error));
  return { list };
})());

afterEach(() => {
  const reasons = seen.list.splice(0);
  const file = expect.getState().testPath;
  // A file's first test also meets what rejected after the last test of the file before it in this
  // process (a call left to settle in its afterAll, a socket that closed late): the text says so.
  const before = seen.lastFile !== undefined && seen.lastFile !== file ? seen.lastFile : undefined;
  seen.lastFile = file;
  expect(
    reasons.map((reason) => {
      const text = reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
      return before === undefined
        ? text
        : `${text} (or after the last test of ${before}, which ran before in this process)`;
    }),
  ).toEqual([]);
});
