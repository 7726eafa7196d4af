import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'harness/**/*.test.ts'],
    // Suites start real workerd and wrangler processes; two cores serve two files at a time.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
