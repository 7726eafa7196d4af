import { defineConfig } from 'vitest/config';
import { machineSlowdown } from './test/support/machine-slack.js';

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
    testTimeout: Math.ceil(60_000 * slowdown),
    hookTimeout: Math.ceil(180_000 * slowdown),
  },
});
