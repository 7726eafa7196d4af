/**
 * Which test files `npm test` runs in a process of their own. The others share their worker's
 * process, one file after another (vitest's `isolate: false`): a fresh process per file cost about
 * half a second of CPU each, mostly loading the same modules again, a fifth of the suite on two cores.
 *
 * A shared process keeps what a file leaves behind in it: the module registry, globals, timers and
 * the environment. So a file that mocks a module, stubs a global or an environment variable, fakes
 * the clock, resets the module registry, or assigns to `process.env` gets a fresh process, found by
 * reading its source. What a shared file must do instead, docs/testing.md says.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What in a test file's source changes its process for the files after it. */
const CHANGES_ITS_PROCESS = [
  /\bvi\.(mock|doMock|unmock|doUnmock|stubGlobal|stubEnv|useFakeTimers|setSystemTime|resetModules)\(/,
  // Plain, logical and compound assignment (`=`, `??=`, `||=`, `&&=`, `+=`), not a comparison.
  /\bprocess\.env(\.[A-Za-z_$][\w$]*|\[[^\]]+\])\s*(\?\?|\|\||&&|\+)?=[^=]/,
  /\bdelete process\.env\b/,
  /\bObject\.assign\(\s*process\.env\b/,
];

/** Whether a test file with this source needs a process of its own. */
export function needsOwnProcess(source: string): boolean {
  return CHANGES_ITS_PROCESS.some((pattern) => pattern.test(source));
}

/** The test files (`*.test.ts`) under `dirs` of `root` that need a process of their own, relative to `root`. */
export function ownProcessFiles(root: string, dirs: readonly string[]): string[] {
  const found: string[] = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') visit(path);
      } else if (entry.name.endsWith('.test.ts') && needsOwnProcess(readFileSync(path, 'utf8'))) {
        found.push(relative(root, path));
      }
    }
  };
  for (const dir of dirs) visit(join(root, dir));
  return found.sort();
}
