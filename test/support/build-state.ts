/** Whether dist/ is a build of today's sources, for the tests that use the build when they can. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Whether the build's file `built` (a path under the repository) exists and is newer than every
 * file in src/: a build that wrote it after the last edit of a source.
 */
export function builtSinceSources(built: string): boolean {
  const path = join(ROOT, built);
  return existsSync(path) && newestMtime(join(ROOT, 'src')) <= statSync(path).mtimeMs;
}
