/**
 * A process-wide check: an unhandled rejection or an uncaught exception anywhere in the library
 * fails the test during which it happened, naming it. (Vitest reports such errors once for the
 * whole run; a real host would die of them.)
 */
import { afterEach, expect } from 'vitest';

// Files share a process (test/support/process-sharing.ts) and this file runs again for each of
// them: the listeners are added once per process, into one list.
const UNHANDLED = Symbol.for('codemode.test.unhandled');
const store = globalThis as { [UNHANDLED]?: unknown[] };
const unhandled = (store[UNHANDLED] ??= (() => {
  const list: unknown[] = [];
  process.on('unhandledRejection', (reason) => list.push(reason));
  process.on('uncaughtException', (error) => list.push(error));
  return list;
})());

afterEach(() => {
  const seen = unhandled.splice(0);
  expect(
    seen.map((reason) => (reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason))),
  ).toEqual([]);
});
