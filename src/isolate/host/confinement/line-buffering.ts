/**
 * Line-buffering workerd's stdout, so that V8's GC trace (heap-trace.ts) reaches the host as each
 * line is printed instead of in 4 KiB blocks. coreutils' `stdbuf -oL` does it by preloading its
 * own library with `_STDBUF_O=L` in the environment. We ask `stdbuf` once where that library is
 * (it sets `LD_PRELOAD` for the command it runs) and hand both variables to the member ourselves,
 * so one mechanism serves an unconfined member and a confined one, whose bwrap clears the
 * environment and whose filesystem view must then hold the library (command-line.ts).
 *
 * Without `stdbuf` (or off Linux), the trace arrives late and a heap bomb ends at V8's own, slower
 * abort; nothing else changes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';

export interface LineBuffering {
  /** The library `stdbuf` preloads, as a path on the host. */
  library: string;
  /** The environment that line-buffers a process's stdout, given where it sees the library. */
  environment(libraryPath: string): Record<string, string>;
}

const ASK_TIMEOUT_MS = 5_000;

let found: LineBuffering | null | undefined;

/** The line buffering this host offers, or undefined; looked up once per process. */
export function findLineBuffering(): LineBuffering | undefined {
  if (found === undefined) found = lookUp();
  return found ?? undefined;
}

function lookUp(): LineBuffering | null {
  if (process.platform !== 'linux') return null;
  const asked = spawnSync('stdbuf', ['-oL', 'printenv', 'LD_PRELOAD'], {
    encoding: 'utf8',
    timeout: ASK_TIMEOUT_MS,
    env: { PATH: process.env.PATH ?? '' },
  });
  const library = asked.status === 0 ? asked.stdout.trim() : '';
  if (!isAbsolute(library) || !existsSync(library)) return null;
  return {
    library,
    environment: (libraryPath) => ({ LD_PRELOAD: libraryPath, _STDBUF_O: 'L' }),
  };
}
