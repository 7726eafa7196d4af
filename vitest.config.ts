import { defineConfig } from 'vitest/config';
import { MAX_CASES_TOGETHER, MAX_WAITING_CASES } from './harness/lanes.js';
import { machineSlowdown } from './test/support/machine-slack.js';
import { LongestFirstSequencer } from './test/support/suite-order.js';

// A loaded machine (a shared CI runner) runs every test slower: the limits that only catch a hang
// stretch with it (test/support/machine-slack.ts; docs/testing.md).
const slowdown = machineSlowdown();

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'harness/**/*.test.ts'],
    // Fails the test during which anything rejected or threw unhandled (a real host would die).
    setupFiles: ['test/setup/unhandled-rejections.ts'],
    // Suites start real workerd and wrangler processes; two cores serve two files at a time.
    maxWorkers: 2,
    // The longest files start first, on a fresh checkout too (test/support/suite-order.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // The catalogue's concurrent tests: a column's lane holds this many cases at most (harness/lanes.ts).
    maxConcurrency: MAX_CASES_TOGETHER + MAX_WAITING_CASES,
    testTimeout: Math.ceil(60_000 * slowdown),
    hookTimeout: Math.ceil(180_000 * slowdown),
  },
});
