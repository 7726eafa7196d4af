/** The checkout's commit and whether it has uncommitted changes, read without touching git's state. */
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '../paths.js';

function git(args: string[]): string | undefined {
  try {
    // --no-optional-locks: `status` must not refresh (write) the index.
    return execFileSync('git', ['--no-optional-locks', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
}

export function gitState(): { commit: string | null; dirty: boolean | null } {
  const commit = git(['rev-parse', 'HEAD'])?.trim();
  const status = git(['status', '--porcelain']);
  return {
    commit: commit && /^[0-9a-f]{7,64}$/.test(commit) ? commit : null,
    dirty: status === undefined ? null : status.trim().length > 0,
  };
}
