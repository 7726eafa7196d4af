/**
 * One Durable Object's state on disk: a directory with its own SQLite file, `state.sqlite`, and
 * under `facets/` one such directory per facet. The database is opened once, configured for
 * durability and checked readable, and stays open, exclusively, until close.
 */
import { closeSync, constants, mkdirSync, openSync, readdirSync, readSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'node-sqlite3-wasm';
import { messageOf } from '../protocol/message-of.js';
import { faultOutOfDescriptors, outOfDescriptors } from './descriptors.js';
import type { Durability } from './durability.js';
import { durableStateError, errnoCode } from './errors.js';
import { SqlStorage } from './sql-storage.js';
import { binding, takeFileFault } from './sqlite-binding.js';
import { checkOwnEntry, ensureOwnDirectory } from './state-dir.js';
import { formatDatabaseUnusable, formatNewerFormat, formatSymlink } from './texts.js';

const DATABASE_FILE = 'state.sqlite';
const FACETS_DIR = 'facets';
/** The files SQLite keeps beside a database: its write-ahead log and its rollback journal. */
const DATABASE_SUFFIXES = ['', '-wal', '-journal'];
const BINDING_LOCK_SUFFIX = '.lock';

/**
 * Set on every database at open. EXCLUSIVE keeps SQLite's own lock from open to close, which also
 * lets WAL run without shared memory (the binding has none). In WAL mode, synchronous=FULL syncs
 * every commit to disk: a commit that returned survives a SIGKILL and a power loss. NORMAL syncs
 * only at checkpoints: a returned commit is in the log file, held by the operating system, so it
 * survives the process's death but not the machine's.
 */
const PRAGMAS = ['PRAGMA locking_mode = EXCLUSIVE', 'PRAGMA journal_mode = WAL'];
const SYNCHRONOUS: Record<Durability, string> = {
  'power-loss': 'PRAGMA synchronous = FULL',
  'process-crash': 'PRAGMA synchronous = NORMAL',
};

/** How a node is opened: what its commits survive, and whether it is a facet's (see `open`). */
interface NodeOptions {
  /** The state's path, which every refusal names. */
  statePath: string;
  durability: Durability;
  /** The most bytes one database may hold (SQLite's max_page_count). */
  maxStateBytes: number;
  isFacet: boolean;
}

export class StateNode {
  readonly dir: string;
  readonly sql: SqlStorage;
  readonly #db: Database;
  readonly #children = new Map<string, StateNode>();
  readonly #options: NodeOptions;

  private constructor(dir: string, db: Database, options: NodeOptions) {
    this.dir = dir;
    this.#db = db;
    this.#options = options;
    this.sql = new SqlStorage(db, {
      gated: options.isFacet,
      file: join(dir, DATABASE_FILE),
      maxStateBytes: options.maxStateBytes,
    });
  }

  /**
   * Opens the node at `dir` and every facet below it, so a damaged file fails now, naming itself.
   * A facet's writes wait for the output gate (output-gate.ts): a facet is reached only through
   * stubs, where the gate opens. The host's own storage has no such boundary, so it commits each
   * statement as it runs.
   */
  static open(dir: string, options: NodeOptions): StateNode {
    const { statePath } = options;
    // The state's own directory was checked as it was locked, and is reached through the lock's
    // descriptor (a link, in /proc, that lstat would refuse).
    if (options.isFacet) ensureOwnDirectory(statePath, dir);
    const file = join(dir, DATABASE_FILE);
    for (const suffix of DATABASE_SUFFIXES) checkOwnEntry(statePath, `${file}${suffix}`, 'file');
    clearBindingLock(statePath, file);
    checkFileFormat(file);
    const node = new StateNode(dir, openDatabase(file, options), options);
    const facet: NodeOptions = { ...options, isFacet: true };
    try {
      const facetsDir = join(dir, FACETS_DIR);
      if (checkOwnEntry(statePath, facetsDir, 'directory')) {
        for (const entry of readdirSync(facetsDir, { withFileTypes: true })) {
          const entryPath = join(facetsDir, entry.name);
          if (entry.isSymbolicLink())
            throw durableStateError('STATE_PATH_SYMLINK', formatSymlink(statePath, entryPath));
          if (entry.isDirectory()) node.#children.set(entry.name, StateNode.open(entryPath, facet));
        }
      }
    } catch (error) {
      node.close();
      throw error;
    }
    return node;
  }

  /** The facet directory named `key` (already encoded), opened on first use. */
  child(key: string): StateNode {
    let child = this.#children.get(key);
    if (!child) {
      ensureOwnDirectory(this.#options.statePath, join(this.dir, FACETS_DIR));
      child = StateNode.open(join(this.dir, FACETS_DIR, key), { ...this.#options, isFacet: true });
      this.#children.set(key, child);
    }
    return child;
  }

  /**
   * Writes a copy of this node's database and every facet's into `target`, in the same layout, with
   * SQLite's `VACUUM INTO`. Synchronous from first to last file, so no call of the state can run in
   * between: the copy is one consistent moment of the whole state.
   */
  backupInto(target: string): void {
    this.sql.commit();
    mkdirSync(target, { recursive: true, mode: 0o700 });
    this.#db.all('VACUUM INTO ?', [join(target, DATABASE_FILE)]);
    for (const [key, child] of this.#children) child.backupInto(join(target, FACETS_DIR, key));
  }

  close(): void {
    for (const child of this.#children.values()) child.close();
    this.#children.clear();
    this.sql.close();
    if (this.#db.isOpen) this.#db.close();
  }
}

/**
 * The binding's own lock is an empty `<file>.lock` directory, which it makes at open and removes
 * at close, so a killed holder leaves it behind and it would refuse every later open. The caller
 * holds the path's kernel lock, so one found here is a dead holder's: it is removed if it is that,
 * an empty directory of this user's, and never through a link; anything else is refused.
 */
function clearBindingLock(statePath: string, file: string): void {
  const lockDir = `${file}${BINDING_LOCK_SUFFIX}`;
  if (!checkOwnEntry(statePath, lockDir, 'directory')) return;
  try {
    rmdirSync(lockDir);
  } catch (error) {
    throw durableStateError(
      'STATE_DATABASE_UNUSABLE',
      formatDatabaseUnusable(file, `its lock directory ${lockDir} cannot be removed (${messageOf(error)})`),
    );
  }
}

/** SQLite's file header: its magic, then (at 18 and 19) the file format versions it writes and reads. */
const SQLITE_MAGIC = 'SQLite format 3\0';
const HEADER_BYTES = 100;
const WRITE_VERSION_AT = 18;
const READ_VERSION_AT = 19;
/** The newest file format this SQLite writes and reads: 1 (rollback journal) and 2 (WAL). */
const NEWEST_FORMAT = 2;

/**
 * Refuses a database a newer SQLite wrote in a format this one cannot write: SQLite itself opens
 * such a file read-only, and it would fail only at its first write.
 */
function checkFileFormat(file: string): void {
  let header: Buffer;
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      header = Buffer.alloc(HEADER_BYTES);
      if (readSync(fd, header, 0, HEADER_BYTES, 0) < HEADER_BYTES) return;
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return;
    throw (
      outOfDescriptors(error, file) ??
      durableStateError('STATE_DATABASE_UNUSABLE', formatDatabaseUnusable(file, messageOf(error)))
    );
  }
  if (header.toString('latin1', 0, SQLITE_MAGIC.length) !== SQLITE_MAGIC) return;
  const write = header[WRITE_VERSION_AT] as number;
  const read = header[READ_VERSION_AT] as number;
  if (write > NEWEST_FORMAT || read > NEWEST_FORMAT)
    throw durableStateError('STATE_DATABASE_UNUSABLE', formatDatabaseUnusable(file, formatNewerFormat(write, read)));
}

function openDatabase(file: string, { durability, maxStateBytes }: NodeOptions): Database {
  let db: Database | undefined;
  takeFileFault();
  try {
    db = new binding.Database(file);
    for (const pragma of [...PRAGMAS, SYNCHRONOUS[durability]]) db.all(pragma);
    const { page_size: pageSize } = db.get('PRAGMA page_size') as { page_size: number };
    db.all(`PRAGMA max_page_count = ${Math.max(1, Math.floor(maxStateBytes / pageSize))}`);
    // The first read of the schema is where a file that is not a database fails.
    db.all('SELECT count(*) FROM sqlite_schema');
    return db;
  } catch (error) {
    // SQLite says "unable to open database file" for a file it could not open for want of a
    // descriptor too; the binding's last failed file call tells which.
    const outOfFiles = faultOutOfDescriptors(takeFileFault(), file);
    if (db?.isOpen) db.close();
    throw outOfFiles ?? durableStateError('STATE_DATABASE_UNUSABLE', formatDatabaseUnusable(file, messageOf(error)));
  }
}
