import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'harness/**/*.test.ts'],
    // Fails the test during which anything rejected or threw unhandled (a real host would die).
    setupFiles: ['test/setup/unhandled-rejections.ts'],
    // Suites start real workerd and wrangler processes; two cores serve two files at a time.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
