/**
 * The directories and files under a state's path, checked before anything opens them: never a
 * symbolic link, always of the kind expected, owned by this process's user and writable by it
 * alone. A link or a file planted by someone else would otherwise be followed, truncated or
 * deleted by the state; a directory others can write would let them plant one at any moment.
 * What the state creates, it creates with mode 0700 (directories) and 0600 (files).
 */
import { type BigIntStats, lstatSync, mkdirSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { messageOf } from '../protocol/message-of.js';
import { outOfDescriptors } from './descriptors.js';
import { durableStateError, errnoCode } from './errors.js';
import { formatNotADirectory, formatPathUnusable, formatSymlink, formatUnsafe } from './texts.js';

export type EntryKind = 'file' | 'directory';

/** Bits that let users other than the owner write. */
const OTHERS_WRITE = 0o022;

/** Makes sure `dir` is a directory of this user's that only it can write, creating it (and any missing parent) with mode 0700. */
export function ensureOwnDirectory(statePath: string, dir: string): void {
  const found = lstatOrAbsent(statePath, dir);
  if (found) {
    checkEntry(statePath, dir, found, 'directory');
    return;
  }
  makeDirectories(statePath, dir);
  const made = lstatOrAbsent(statePath, dir);
  if (!made)
    throw durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(statePath, `${dir} vanished as it was created`));
  checkEntry(statePath, dir, made, 'directory');
}

/**
 * Creates the directory a new state is made in, and its missing parents, with mode 0700. They are
 * left in place if the open fails: another process may be creating its own state in them.
 */
export function ensureParent(statePath: string, parent: string): void {
  makeDirectories(statePath, parent);
}

function makeDirectories(statePath: string, dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if (errnoCode(error) === 'ENOTDIR' || errnoCode(error) === 'EEXIST')
      throw durableStateError('STATE_NOT_A_DIRECTORY', formatNotADirectory(statePath, nearestFile(dir)));
    throw (
      outOfDescriptors(error, dir) ??
      durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(statePath, messageOf(error)))
    );
  }
}

/** Checks an entry that may be absent: absent is fine; present, it must be this user's own `kind`. */
export function checkOwnEntry(statePath: string, path: string, kind: EntryKind): boolean {
  const found = lstatOrAbsent(statePath, path);
  if (!found) return false;
  checkEntry(statePath, path, found, kind);
  return true;
}

/**
 * After opening `path` (without following a link): what the descriptor holds must be what was
 * checked at that name, so nothing was swapped in between.
 */
export function checkOpened(statePath: string, path: string, opened: Stats | BigIntStats, kind: EntryKind): void {
  checkEntry(statePath, path, opened, kind);
  const named = lstatOrAbsent(statePath, path);
  if (!named || named.ino !== opened.ino || named.dev !== opened.dev)
    throw durableStateError(
      'STATE_PATH_UNUSABLE',
      formatPathUnusable(statePath, `${path} was replaced while it was opened`),
    );
}

function checkEntry(statePath: string, path: string, stats: Stats | BigIntStats, kind: EntryKind): void {
  if (stats.isSymbolicLink()) throw durableStateError('STATE_PATH_SYMLINK', formatSymlink(statePath, path));
  const isKind = kind === 'directory' ? stats.isDirectory() : stats.isFile();
  if (!isKind) {
    if (kind === 'directory') throw durableStateError('STATE_NOT_A_DIRECTORY', formatNotADirectory(statePath, path));
    throw durableStateError(
      'STATE_PATH_UNUSABLE',
      formatPathUnusable(statePath, `${path} is not a regular file; remove it, the state creates it itself`),
    );
  }
  const ownUid = process.getuid?.();
  if (ownUid === undefined) return;
  const uid = Number(stats.uid);
  const mode = Number(stats.mode);
  if (uid !== ownUid || (mode & OTHERS_WRITE) !== 0)
    throw durableStateError('STATE_PATH_UNSAFE', formatUnsafe(statePath, path, uid, mode, ownUid));
}

function lstatOrAbsent(statePath: string, path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    if (errnoCode(error) === 'ENOTDIR')
      throw durableStateError('STATE_NOT_A_DIRECTORY', formatNotADirectory(statePath, nearestFile(path)));
    throw durableStateError('STATE_PATH_UNUSABLE', formatPathUnusable(statePath, messageOf(error)));
  }
}

/** The first existing ancestor of `path` (or `path`) that is not a directory: what ENOTDIR meant. */
function nearestFile(path: string): string {
  for (let at = path; at !== dirname(at); at = dirname(at)) {
    try {
      if (!lstatSync(at).isDirectory()) return at;
    } catch {
      // Not there: look further up.
    }
  }
  return path;
}
