/**
 * The single-writer lock on a state directory: an exclusive flock(2) on `<path>/LOCK`, held by
 * this process's own open file of it.
 *
 * Node has no flock call, so util-linux's `flock` takes the lock on a copy of that file descriptor
 * handed to it, and exits. A flock lock belongs to the open file, not to a process: it stays held
 * as long as this process keeps the file open, and the kernel drops it when the file is closed,
 * by `release()` or by this process's death, whatever kills it. (The WebAssembly SQLite's own lock
 * is a directory, which a killed holder leaves behind.)
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { formatAlreadyOpen, formatHolder, formatLockToolMissing, formatPathUnusable } from './texts.js';

/** `flock`'s exit status when the lock is held elsewhere (its --conflict-exit-code). */
const CONFLICT_EXIT = 75;

const LOCK_FILE = 'LOCK';

/** Where the lock file's descriptor is in the `flock` child: its argument names it. */
const CHILD_FD = 3;

export interface HolderLock {
  /** Closes the lock file: the kernel drops the lock at once. */
  release(): void;
}

interface HolderRecord {
  pid: number;
  host: string;
  since: string;
}

/** Takes the lock on `dir` or throws a text naming the path and, if it can be read, the holder. */
export async function acquireHolderLock(dir: string): Promise<HolderLock> {
  const lockPath = join(dir, LOCK_FILE);
  let fd: number;
  try {
    fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT, 0o644);
  } catch (error) {
    throw new Error(formatPathUnusable(dir, error instanceof Error ? error.message : String(error)));
  }
  let outcome: 'acquired' | 'conflict' | Error;
  try {
    outcome = await lockWithFlock(fd);
  } catch (error) {
    outcome = error instanceof Error ? error : new Error(String(error));
  }
  if (outcome !== 'acquired') {
    closeSync(fd);
    if (outcome === 'conflict') throw new Error(formatAlreadyOpen(dir, readHolder(lockPath)));
    throw new Error(formatLockToolMissing(dir, outcome.message));
  }
  const record: HolderRecord = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify(record)}\n`, 0);
  let open = true;
  return {
    release() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** Runs `flock` on a copy of `fd`: 'acquired' once it exits 0, 'conflict' on its conflict status. */
function lockWithFlock(fd: number): Promise<'acquired' | 'conflict' | Error> {
  return new Promise((resolve) => {
    const child = spawn(
      'flock',
      ['--exclusive', '--nonblock', '--conflict-exit-code', String(CONFLICT_EXIT), String(CHILD_FD)],
      { stdio: ['ignore', 'ignore', 'pipe', fd] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', (error) => resolve(error));
    child.once('close', (code) => {
      if (code === 0) resolve('acquired');
      else if (code === CONFLICT_EXIT) resolve('conflict');
      else resolve(new Error(stderr.trim() || `exited with status ${code}`));
    });
  });
}

function readHolder(lockPath: string): string | undefined {
  try {
    const record = JSON.parse(readFileSync(lockPath, 'utf8')) as HolderRecord;
    if (typeof record.pid !== 'number' || typeof record.host !== 'string') return undefined;
    return formatHolder(record);
  } catch {
    return undefined;
  }
}
