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
 *
 * Two rules keep a path to one writer while several processes open it at once, and while it is
 * renamed under its holder:
 *
 * - A new state is created under a private name beside the path, locked, given its LOCK, and only
 *   then renamed onto the path. rename(2) refuses to replace a directory that is not empty, so the
 *   first to publish wins and the others find it locked; nobody ever removes a directory at the
 *   path, which another process may have locked. A process removes only what it created and
 *   still holds: its own private directory, when it did not publish it.
 * - Once locked, the directory is reached through this process's descriptor of it
 *   (`/proc/self/fd/<n>`), never again by its name: what the state opens or creates later (a new
 *   facet, a journal) lands in the directory the lock is on, whatever it is named by then, and
 *   never recreates a state under a name it no longer has.
 */
import { spawn } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { messageOf } from '../protocol/message-of.js';
import { outOfDescriptors } from './descriptors.js';
import { durableStateError, errnoCode, isDurableStateError, showRootAs } from './errors.js';
import { checkOpened, checkOwnEntry, ensureParent } from './state-dir.js';
import {
  formatAlreadyOpen,
  formatHolder,
  formatLockToolMissing,
  formatNotADirectory,
  formatPathReplaced,
  formatPathUnusable,
  formatSymlink,
} from './texts.js';

/** `flock`'s exit status when the lock is held elsewhere (its --conflict-exit-code). */
const CONFLICT_EXIT = 75;

const LOCK_FILE = 'LOCK';

/** Where the directory's descriptor is in the `flock` child: its argument names it. */
const CHILD_FD = 3;

/** How often an open starts over when the path was swapped under it, before it gives up. */
const MAX_ATTEMPTS = 3;

/** Where this process's descriptors can be reached as paths (Linux, as `flock` is). */
const DESCRIPTOR_DIR = '/proc/self/fd';
const HAS_DESCRIPTOR_DIR = existsSync(DESCRIPTOR_DIR);

export interface HolderLock {
  /**
   * The held directory as this process reaches it: through its descriptor, under whatever name it
   * has now (the path itself where /proc is missing). Texts name it as the path.
   */
  readonly root: string;
  /** Closes the directory's descriptor: the kernel drops the lock at once. */
  release(): void;
}

interface HolderRecord {
  pid: number;
  host: string;
  since: string;
}

/** Takes the lock on the state directory `path`, creating it if missing, or throws a text naming the path and, if it can be read, the holder. */
export async function claimStateDirectory(path: string): Promise<HolderLock> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const claim = checkOwnEntry(path, path, 'directory') ? await lockExisting(path) : await createLocked(path);
    if (claim) return claim;
  }
  throw durableStateError('STATE_PATH_REPLACED', formatPathReplaced(path, MAX_ATTEMPTS));
}

/** Locks the directory at `path`; undefined if the name was given to another directory meanwhile. */
async function lockExisting(path: string): Promise<HolderLock | undefined> {
  try {
    accessSync(path, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (error) {
    throw (
      outOfDescriptors(error, path) ??
      durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(path, messageOf(error)))
    );
  }
  const fd = openDirectory(path, path);
  await lockOrRefuse(fd, path);
  const held = hold(fd, path);
  try {
    writeHolder(path, held.root);
  } catch (error) {
    // Written into a directory that was already replaced (and so unlinked): not ours to hold.
    const replaced = !namesDescriptor(path, fd);
    held.release();
    if (replaced) return undefined;
    throw error;
  }
  // Until LOCK was in it, the directory was empty, and a creator's rename may have replaced it.
  if (!namesDescriptor(path, fd)) {
    held.release();
    return undefined;
  }
  return held;
}

/**
 * Creates the state under a private name beside `path`, locks it and writes its LOCK, then renames
 * it onto `path`. Undefined if another process published first (its directory has a LOCK, so the
 * rename fails); the private directory is then removed, as this process still holds it.
 */
async function createLocked(path: string): Promise<HolderLock | undefined> {
  const parent = dirname(path);
  ensureParent(path, parent);
  let fresh: string;
  try {
    fresh = mkdtempSync(join(parent, `.${basename(path)}.opening-`));
  } catch (error) {
    throw (
      outOfDescriptors(error, parent) ??
      durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(path, messageOf(error)))
    );
  }
  let fd: number;
  try {
    fd = openDirectory(path, fresh);
    await lockOrRefuse(fd, path);
  } catch (error) {
    removeQuietly(() => rmdirSync(fresh));
    throw error;
  }
  const held = hold(fd, path);
  try {
    writeHolder(path, held.root);
    renameSync(fresh, path);
  } catch (error) {
    removeQuietly(() => unlinkSync(join(held.root, LOCK_FILE)));
    removeQuietly(() => rmdirSync(fresh));
    held.release();
    const code = errnoCode(error);
    if (code === 'EEXIST' || code === 'ENOTEMPTY') return undefined;
    if (isDurableStateError(error)) throw error;
    if (code === 'ENOTDIR' || code === 'EISDIR')
      throw durableStateError('STATE_NOT_A_DIRECTORY', formatNotADirectory(path, path));
    throw (
      outOfDescriptors(error, path) ??
      durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(path, messageOf(error)))
    );
  }
  return held;
}

function removeQuietly(remove: () => void): void {
  try {
    remove();
  } catch {
    // Already gone, or not empty: either way nothing of another process's is touched.
  }
}

/** The lock, held: `fd` reached as a path, and texts naming that path as `path`. */
function hold(fd: number, path: string): HolderLock {
  const root = HAS_DESCRIPTOR_DIR ? `${DESCRIPTOR_DIR}/${fd}` : path;
  const unshow = showRootAs(root, path);
  let open = true;
  return {
    root,
    release() {
      if (!open) return;
      open = false;
      unshow();
      closeSync(fd);
    },
  };
}

/** Whether `path` still names the directory open as `fd`. */
function namesDescriptor(path: string, fd: number): boolean {
  try {
    const named = lstatSync(path);
    const held = fstatSync(fd);
    return named.isDirectory() && named.ino === held.ino && named.dev === held.dev;
  } catch {
    return false;
  }
}

/** The directory `dir`, opened without following a link, and checked to be the one that was checked. */
function openDirectory(statePath: string, dir: string): number {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw durableStateError('STATE_PATH_SYMLINK', formatSymlink(statePath, dir));
    throw (
      outOfDescriptors(error, statePath) ??
      durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(statePath, messageOf(error)))
    );
  }
  try {
    checkOpened(statePath, dir, fstatSync(fd), 'directory');
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/** Locks `fd`, or closes it and throws: held by another holder, or `flock` could not run. */
async function lockOrRefuse(fd: number, path: string): Promise<void> {
  const outcome = await lockWithFlock(fd);
  if (outcome === 'acquired') return;
  closeSync(fd);
  if (outcome === 'conflict')
    throw durableStateError('STATE_ALREADY_OPEN', formatAlreadyOpen(path, readHolder(path, join(path, LOCK_FILE))));
  throw (
    outOfDescriptors(outcome, path) ??
    durableStateError('STATE_LOCK_TOOL_MISSING', formatLockToolMissing(path, outcome.message))
  );
}

/** Runs `flock` on a copy of `fd`: 'acquired' once it exits 0, 'conflict' on its conflict status. */
function lockWithFlock(fd: number): Promise<'acquired' | 'conflict' | Error> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(
        'flock',
        ['--exclusive', '--nonblock', '--conflict-exit-code', String(CONFLICT_EXIT), String(CHILD_FD)],
        { stdio: ['ignore', 'ignore', 'pipe', fd] },
      );
    } catch (error) {
      resolve(error instanceof Error ? error : new Error(String(error)));
      return;
    }
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

/** Writes this holder's record into LOCK in the held directory `root`, never through a link. */
function writeHolder(statePath: string, root: string): void {
  const lockPath = join(root, LOCK_FILE);
  checkOwnEntry(statePath, lockPath, 'file');
  let fd: number;
  try {
    fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') throw durableStateError('STATE_PATH_SYMLINK', formatSymlink(statePath, lockPath));
    throw (
      outOfDescriptors(error, lockPath) ??
      durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(statePath, messageOf(error)))
    );
  }
  try {
    checkOpened(statePath, lockPath, fstatSync(fd), 'file');
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
