/**
 * One Durable Object's state on disk: a directory with its own SQLite file, `state.sqlite`, and
 * under `facets/` one such directory per facet. The database is opened once, configured for
 * durability and checked readable, and stays open, exclusively, until close.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'node-sqlite3-wasm';
import sqlite from 'node-sqlite3-wasm';
import type { Durability } from './open-state.js';
import { SqlStorage } from './sql-storage.js';
import { formatDatabaseUnusable } from './texts.js';

const DATABASE_FILE = 'state.sqlite';
const FACETS_DIR = 'facets';

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
  durability: Durability;
  isFacet: boolean;
}

export class StateNode {
  readonly dir: string;
  readonly sql: SqlStorage;
  readonly #db: Database;
  readonly #children = new Map<string, StateNode>();
  readonly #durability: Durability;

  private constructor(dir: string, db: Database, options: NodeOptions) {
    this.dir = dir;
    this.#db = db;
    this.#durability = options.durability;
    this.sql = new SqlStorage(db, { gated: options.isFacet });
  }

  /**
   * Opens the node at `dir` and every facet below it, so a damaged file fails now, naming itself.
   * A facet's writes wait for the output gate (output-gate.ts): a facet is reached only through
   * stubs, where the gate opens. The host's own storage has no such boundary, so it commits each
   * statement as it runs.
   */
  static open(dir: string, options: NodeOptions): StateNode {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, DATABASE_FILE);
    const node = new StateNode(dir, openDatabase(file, options.durability), options);
    const facet: NodeOptions = { durability: options.durability, isFacet: true };
    try {
      const facetsDir = join(dir, FACETS_DIR);
      if (existsSync(facetsDir)) {
        for (const entry of readdirSync(facetsDir, { withFileTypes: true })) {
          if (entry.isDirectory()) node.#children.set(entry.name, StateNode.open(join(facetsDir, entry.name), facet));
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
      child = StateNode.open(join(this.dir, FACETS_DIR, key), { durability: this.#durability, isFacet: true });
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
    mkdirSync(target, { recursive: true });
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

function openDatabase(file: string, durability: Durability): Database {
  // The binding's own lock is a `<file>.lock` directory, which a killed holder leaves behind. The
  // caller holds the path's kernel lock, so a directory left here is a dead holder's.
  rmSync(`${file}.lock`, { recursive: true, force: true });
  let db: Database | undefined;
  try {
    db = new sqlite.Database(file);
    for (const pragma of [...PRAGMAS, SYNCHRONOUS[durability]]) db.all(pragma);
    // The first read of the schema is where a file that is not a database fails.
    db.all('SELECT count(*) FROM sqlite_schema');
    return db;
  } catch (error) {
    if (db?.isOpen) db.close();
    throw new Error(formatDatabaseUnusable(file, error instanceof Error ? error.message : String(error)));
  }
}
