/**
 * A process-wide check: an unhandled rejection or an uncaught exception anywhere in the library
 * fails the test during which it happened, naming it. (Vitest reports such errors once for the
 * whole run; a real host would die of them.)
 */
import { afterEach, expect } from 'vitest';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));
process.on('uncaughtException', (error) => unhandled.push(error));

afterEach(() => {
  const seen = unhandled.splice(0);
  expect(
    seen.map((reason) => (reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason))),
  ).toEqual([]);
});
