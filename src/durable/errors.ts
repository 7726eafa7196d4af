/**
 * The durable state's refusals: an `Error` whose `code` a host can branch on, with a text composed
 * in texts.ts. The codes are stable; the texts may gain detail.
 */
export type DurableStateErrorCode =
  /** Another holder (this process or another one) has the path. */
  | 'STATE_ALREADY_OPEN'
  /** The path, or something under it, is a symbolic link. */
  | 'STATE_PATH_SYMLINK'
  /** The path, or a directory under it, exists and is not a directory. */
  | 'STATE_NOT_A_DIRECTORY'
  /** A directory or file of the state is owned by another user, or others can write it. */
  | 'STATE_PATH_UNSAFE'
  /** The directory cannot be created, read or written. */
  | 'STATE_PATH_UNUSABLE'
  /** util-linux's `flock` could not run. */
  | 'STATE_LOCK_TOOL_MISSING'
  /** This process (EMFILE) or the system (ENFILE) has no file descriptor left: nothing is damaged. */
  | 'STATE_OUT_OF_DESCRIPTORS'
  /** The directory was replaced under an open, each time it was tried. */
  | 'STATE_PATH_REPLACED'
  /** A database file is not one this SQLite can read and write. */
  | 'STATE_DATABASE_UNUSABLE'
  /** The disk (or the file system's quota) is full. */
  | 'STATE_DISK_FULL'
  /** A write would take the state past `maxStateBytes`. */
  | 'STATE_SIZE_LIMIT'
  /** A member was read from openDurableState()'s Promise, not from the state: a forgotten await. */
  | 'STATE_NOT_AWAITED'
  /** `backup()`'s target exists already, or is inside the state. */
  | 'STATE_BACKUP_TARGET'
  /** The state (or a facet's storage) is closed, or a held transaction could not commit. */
  | 'STATE_CLOSED';

export interface DurableStateError extends Error {
  readonly code: DurableStateErrorCode;
}

export function durableStateError(code: DurableStateErrorCode, message: string): DurableStateError {
  return Object.assign(new Error(shownPaths(message)), { code });
}

/**
 * A held state directory is reached through its descriptor, as `/proc/self/fd/<n>` (holder-lock.ts);
 * a text names it as the path it was opened as, which is what the host passed and knows.
 */
const shownAs = new Map<string, string>();
const DESCRIPTOR_PATH = /\/proc\/self\/fd\/\d+(?!\d)/g;

/** Texts name `root` as `path` until the returned function is called. */
export function showRootAs(root: string, path: string): () => void {
  shownAs.set(root, path);
  return () => {
    if (shownAs.get(root) === path) shownAs.delete(root);
  };
}

function shownPaths(text: string): string {
  return shownAs.size === 0 ? text : text.replace(DESCRIPTOR_PATH, (root) => shownAs.get(root) ?? root);
}

export function isDurableStateError(error: unknown): error is DurableStateError {
  const code = errnoCode(error);
  return error instanceof Error && code !== undefined && code.startsWith('STATE_');
}

/** The errno code of a failed fs call, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
