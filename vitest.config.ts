import { configDefaults, defineConfig } from 'vitest/config';
import { MAX_CASES_TOGETHER, MAX_WAITING_CASES } from './harness/lanes.js';
import { ROOT } from './test/support/build-state.js';
import { machineSlowdown } from './test/support/machine-slack.js';
import { ownProcessFiles } from './test/support/process-sharing.js';
import { LongestFirstSequencer } from './test/support/suite-order.js';

// A loaded machine (a shared CI runner) runs every test slower: the limits that only catch a hang
// stretch with it (test/support/machine-slack.ts; docs/testing.md).
const slowdown = machineSlowdown();

const TEST_DIRS = ['test', 'harness'];

const include = TEST_DIRS.map((dir) => `${dir}/**/*.test.ts`);
// Files that change their process for the next file (a mocked module, a stubbed global, a fake
// clock, an assigned environment variable) get one of their own; the others share their worker's.
const ownProcess = ownProcessFiles(ROOT, TEST_DIRS);

export default defineConfig({
  test: {
    // Before each file: fail the test during which anything rejected or threw unhandled (a real host
    // would die), and measure the machine's slowdown again, since files share a process.
    setupFiles: ['test/setup/unhandled-rejections.ts', 'test/setup/machine-slowdown.ts'],
    // Three workers on two cores: most files wait on timers and on the processes they start, and two
    // workers left a fifth of two cores idle (measured: 522 s with two, 461 s with three, 453 s with
    // four, the cores then about 95% busy).
    maxWorkers: 3,
    // The longest files start first, on a fresh checkout too (test/support/suite-order.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // The catalogue's concurrent tests: a column's lane holds this many cases at most (harness/lanes.ts).
    maxConcurrency: MAX_CASES_TOGETHER + MAX_WAITING_CASES,
    testTimeout: Math.ceil(60_000 * slowdown),
    hookTimeout: Math.ceil(180_000 * slowdown),
    projects: [
      // One file after another in each worker's process (test/support/process-sharing.ts).
      {
        extends: true,
        test: { name: 'shared', include, exclude: [...configDefaults.exclude, ...ownProcess], isolate: false },
      },
      { extends: true, test: { name: 'own-process', include: ownProcess } },
    ],
  },
});
