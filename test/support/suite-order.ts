/**
 * The order `npm test` starts its files in: the longest first, so that the two workers finish
 * together instead of one running a long file alone at the end. Left to itself, vitest starts
 * first what its cache says took longest, and, on a fresh checkout (CI) with no cache, the largest
 * files: the catalogue's, three lines each yet the longest of the suite, would start last.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { ROOT } from './build-state.js';

/**
 * The files that take longest, longest first, as measured file by file with vitest's JSON reporter
 * (at load 10 to 20, where the whole took 2,285 s over 182 files; the catalogue's reference columns
 * placed as they run since their long waits start first). The fuzzer's planted difference and the
 * program-start bound joined them when files came to share a process (1,128 s over 196 files, three
 * at a time on a quiet machine): mostly waits, they end the suite alone when they start last.
 * The others follow in vitest's own order.
 */
export const LONGEST_FIRST: readonly string[] = [
  'harness/catalogue/ours-remote.test.ts',
  'test/package.test.ts',
  'test/server/daemon.test.ts',
  'harness/cli/matrix.test.ts',
  'test/hostile/containment.test.ts',
  'harness/catalogue/latest.test.ts',
  'test/hostile/bounds.test.ts',
  'harness/catalogue/0.4.1.test.ts',
  'test/isolate/host/executor/tool-call-flood.test.ts',
  'harness/fuzz/planted.test.ts',
  'harness/catalogue/ours.test.ts',
  'test/bundle/packages-docs.test.ts',
  'test/record/observing-docs.test.ts',
  'test/isolate/host/run/cpu-timeout.test.ts',
  'test/server/attacks.test.ts',
  'test/isolate/host/run/program-start.test.ts',
  'harness/catalogue/0.2.2.test.ts',
  'harness/catalogue/0.4.4.test.ts',
  'harness/catalogue/0.3.8.test.ts',
  'test/remote/breakage.test.ts',
  'harness/catalogue/ours-worker.test.ts',
];

/** Where `file` (a path under the repository) stands in LONGEST_FIRST; after them all when absent. */
function rank(file: string): number {
  const index = LONGEST_FIRST.indexOf(file);
  return index === -1 ? LONGEST_FIRST.length : index;
}

/** The files in the order vitest's own sequencer gives them, with LONGEST_FIRST's moved to the front. */
export function longestFirst<T>(files: readonly T[], path: (file: T) => string): T[] {
  return [...files].sort((a, b) => rank(path(a)) - rank(path(b)));
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return longestFirst(await super.sort(files), (file) => relative(ROOT, file.moduleId));
  }
}
