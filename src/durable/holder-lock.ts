/**
 * The single-writer lock on a state directory: an exclusive flock(2) on the directory itself, held
 * by this process's own open file of it.
 *
 * The lock is on the directory, not on a file in it, so nothing done to the files inside (a tmp
 * cleaner, a script that deletes a "stale" LOCK) can let a second holder in. Node has no flock call, so util-linux's `flock`
 * takes the lock on a copy of the descriptor handed to it, and exits. A flock lock belongs to the
 * open file, not to a process: it stays held as long as this process keeps the directory open, and
 * the kernel drops it when the descriptor is closed, by `release()` or by this process's death,
 * whatever kills it. `<path>/LOCK` holds only a record of the holder, which a refused open names.
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { messageOf } from '../protocol/message-of.js';
import { durableStateError, errnoCode } from './errors.js';
import { checkOpened, checkOwnEntry } from './state-dir.js';
import { formatAlreadyOpen, formatHolder, formatLockToolMissing, formatPathUnusable, formatSymlink } from './texts.js';

/** `flock`'s exit status when the lock is held elsewhere (its --conflict-exit-code). */
const CONFLICT_EXIT = 75;

const LOCK_FILE = 'LOCK';

/** Where the directory's descriptor is in the `flock` child: its argument names it. */
const CHILD_FD = 3;

export interface HolderLock {
  /** Closes the directory's descriptor: the kernel drops the lock at once. */
  release(): void;
}

interface HolderRecord {
  pid: number;
  host: string;
  since: string;
}

/** Takes the lock on `dir` or throws a text naming the path and, if it can be read, the holder. */
export async function acquireHolderLock(dir: string): Promise<HolderLock> {
  const fd = openDirectory(dir);
  let outcome: 'acquired' | 'conflict' | Error;
  try {
    outcome = await lockWithFlock(fd);
  } catch (error) {
    outcome = error instanceof Error ? error : new Error(String(error));
  }
  if (outcome !== 'acquired') {
    closeSync(fd);
    if (outcome === 'conflict')
      throw durableStateError('STATE_ALREADY_OPEN', formatAlreadyOpen(dir, readHolder(dir, join(dir, LOCK_FILE))));
    throw durableStateError('STATE_LOCK_TOOL_MISSING', formatLockToolMissing(dir, outcome.message));
  }
  try {
    writeHolder(dir, join(dir, LOCK_FILE));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  let open = true;
  return {
    release() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** The directory, opened without following a link, and checked to be the one that was checked. */
function openDirectory(dir: string): number {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw durableStateError('STATE_PATH_SYMLINK', formatSymlink(dir, dir));
    throw durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(dir, messageOf(error)));
  }
  try {
    checkOpened(dir, dir, fstatSync(fd), 'directory');
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
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

/** Writes this holder's record into LOCK, never through a link. */
function writeHolder(dir: string, lockPath: string): void {
  checkOwnEntry(dir, lockPath, 'file');
  let fd: number;
  try {
    fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw durableStateError('STATE_PATH_SYMLINK', formatSymlink(dir, lockPath));
    throw durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(dir, messageOf(error)));
  }
  try {
    checkOpened(dir, lockPath, fstatSync(fd), 'file');
    const record: HolderRecord = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
    ftruncateSync(fd, 0);
    writeSync(fd, `${JSON.stringify(record)}\n`, 0);
  } finally {
    closeSync(fd);
  }
}

function readHolder(dir: string, lockPath: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(lockPath, constants.O_RDONLY | constants.O_NOFOLLOW);
    checkOpened(dir, lockPath, fstatSync(fd), 'file');
    const record = JSON.parse(readFileSync(fd, 'utf8')) as HolderRecord;
    if (typeof record.pid !== 'number' || typeof record.host !== 'string') return undefined;
    return formatHolder(record);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
