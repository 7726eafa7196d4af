/**
 * `storage.sql`: Cloudflare's synchronous SQL API over one SQLite file of the WebAssembly binding.
 * `exec` runs every statement of its query at once, in order, binding the last one, and returns
 * a cursor over the last one's rows, with values as Cloudflare gives them (INTEGER as a number,
 * BLOB as an ArrayBuffer).
 */
import type { Database, Statement } from 'node-sqlite3-wasm';
import { messageOf } from '../protocol/message-of.js';
import { faultOutOfDescriptors } from './descriptors.js';
import { durableStateError } from './errors.js';
import { holdUntilGate } from './output-gate.js';
import { splitAtSemicolons } from './split-statements.js';
import { type BindingValue, bindValues, type Row, readRows, type SqlValue } from './sql-values.js';
import { takeFileFault } from './sqlite-binding.js';
import { type KeptStatement, StatementCache } from './statement-cache.js';
import {
  formatClosed,
  formatCommitFailed,
  formatDiskFull,
  formatStateFull,
  formatUnsupportedBinding,
  NO_STATEMENT,
  ONE_MANY_ROWS,
  ONE_NO_ROWS,
  SQL_QUERY_NOT_STRING,
  TRANSACTION_STATEMENT,
  WRONG_BINDING_COUNT,
} from './texts.js';

export type { SqlValue } from './sql-values.js';

/** The binding's statement internals used here; the binding is pinned to one exact version. */
interface StatementInternals {
  _bind(values: BindingValue[]): void;
}

const NOTHING_TO_PREPARE = 'Nothing to prepare';
/** SQLite's texts for SQLITE_FULL and SQLITE_IOERR. */
const SQLITE_FULL = 'database or disk is full';
const SQLITE_IOERR = 'disk I/O error';
/** The errno codes of a file system out of space, or of quota. */
const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
const INCOMPLETE_INPUT = 'incomplete input';

export class SqlCursor implements IterableIterator<Row> {
  readonly columnNames: string[];
  readonly #rows: Row[];
  readonly #rowsWritten: number;
  #next = 0;

  constructor(columnNames: string[], rows: Row[], rowsWritten: number) {
    this.columnNames = columnNames;
    this.#rows = rows;
    this.#rowsWritten = rowsWritten;
  }

  /** Rows this cursor has handed out; Cloudflare counts rows scanned (see docs/durable-state.md). */
  get rowsRead(): number {
    return this.#next;
  }

  get rowsWritten(): number {
    return this.#rowsWritten;
  }

  next(): IteratorResult<Row> {
    const row = this.#rows[this.#next];
    if (row === undefined) return { done: true, value: undefined };
    this.#next++;
    return { done: false, value: row };
  }

  [Symbol.iterator](): IterableIterator<Row> {
    return this;
  }

  /** The rows not yet read. */
  toArray(): Row[] {
    const rest = this.#rows.slice(this.#next);
    this.#next = this.#rows.length;
    return rest;
  }

  one(): Row {
    const rest = this.toArray();
    if (rest.length === 0) throw new Error(ONE_NO_ROWS);
    if (rest.length > 1) throw new Error(ONE_MANY_ROWS);
    return rest[0] as Row;
  }

  *raw(): IterableIterator<SqlValue[]> {
    for (const row of this) yield this.columnNames.map((name) => row[name] ?? null);
  }
}

export class SqlStorage {
  readonly #db: Database;
  readonly #totalChanges: Statement;
  readonly #statements = new StatementCache();
  /** Whether statements wait in a transaction for the output gate (a facet's), or commit one by one. */
  readonly #gated: boolean;
  /** What every call throws once closed, or once a held transaction failed to commit. */
  #closed: string | undefined;

  /** The database file, which a disk-full or a size-limit error names, and that limit. */
  readonly #file: string;
  readonly #maxStateBytes: number;

  constructor(db: Database, options: { gated: boolean; file: string; maxStateBytes: number }) {
    this.#db = db;
    this.#gated = options.gated;
    this.#file = options.file;
    this.#maxStateBytes = options.maxStateBytes;
    this.#totalChanges = db.prepare('SELECT total_changes() AS n');
  }

  /** Commits the transaction held for the output gate, if any; a failure ends this storage. */
  commit = (): void => {
    if (!this.#db.isOpen || !this.#db.inTransaction) return;
    takeFileFault();
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#closed ??= formatCommitFailed(messageOf(this.#explain(error)));
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      throw durableStateError('STATE_CLOSED', this.#closed);
    }
  };

  get databaseSize(): number {
    if (this.#closed !== undefined) throw durableStateError('STATE_CLOSED', this.#closed);
    // As workerd counts it: pages in use, free pages excluded.
    const row = this.#db.get(
      'SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count) AS pages, (SELECT page_size FROM pragma_page_size) AS size',
    ) as { pages: number; size: number };
    return row.pages * row.size;
  }

  exec(query: string, ...bindings: unknown[]): SqlCursor {
    if (this.#closed !== undefined) throw durableStateError('STATE_CLOSED', this.#closed);
    if (typeof query !== 'string') throw new TypeError(SQL_QUERY_NOT_STRING);
    takeFileFault();
    try {
      return this.#exec(query, bindings);
    } catch (error) {
      throw this.#explain(error);
    }
  }

  /**
   * SQLite's text for a write that did not fit says neither which nor why: "database or disk is
   * full" is the size limit here (the binding's file system reports a full disk as an I/O error),
   * and "disk I/O error" is a full disk when the failed file call said so.
   */
  #explain(error: unknown): unknown {
    const message = error instanceof Error ? error.message : '';
    if (message === SQLITE_FULL)
      return durableStateError('STATE_SIZE_LIMIT', formatStateFull(this.#file, this.#maxStateBytes));
    const fault = takeFileFault();
    if (message === SQLITE_IOERR && fault && DISK_FULL_CODES.has(fault.code))
      return durableStateError('STATE_DISK_FULL', formatDiskFull(fault.path ?? this.#file, fault.code));
    return faultOutOfDescriptors(fault, this.#file) ?? error;
  }

  #exec(query: string, bindings: unknown[]): SqlCursor {
    const values = bindings.map(toBindingValue);
    const changesBefore = this.#changes();
    const pieces = splitAtSemicolons(query);
    // Whitespace after the last semicolon ends nothing; a comment there is an empty statement.
    while (pieces.length > 0 && (pieces.at(-1) as string).trim() === '') pieces.pop();
    if (pieces.length === 0) throw new Error(NO_STATEMENT);
    if (this.#gated && !this.#db.inTransaction) {
      this.#db.exec('BEGIN');
      holdUntilGate(this.commit);
    }
    let pending = '';
    let last: { columns: string[]; rows: Row[] } = { columns: [], rows: [] };
    for (let index = 0; index < pieces.length; index++) {
      pending += pieces[index];
      const isLast = index === pieces.length - 1;
      const text = pending;
      const statement = this.#statements.take(text) ?? this.#prepare(text, isLast);
      if (statement === 'incomplete') continue;
      pending = '';
      if (statement === 'nothing') throw new Error(NO_STATEMENT);
      const bareText = stripLeadingComments(text);
      let ran = false;
      try {
        if (TRANSACTION_CONTROL.test(bareText)) throw new Error(TRANSACTION_STATEMENT);
        last = runStatement(statement, isLast ? values : []);
        ran = true;
      } finally {
        // A statement that failed is not kept: finalizing it reports its error, as before.
        if (ran) this.#statements.keep(text, bareText, statement);
        else {
          this.#statements.drop(text);
          statement.prepared.finalize();
        }
      }
    }
    return new SqlCursor(last.columns, last.rows, this.#changes() - changesBefore);
  }

  /** Ends this storage: the statement it keeps is finalized; its owner closes the database. */
  close(): void {
    if (this.#totalChanges.isFinalized) return;
    try {
      this.commit();
    } finally {
      this.#closed = formatClosed('storage.sql');
      this.#statements.clear();
      this.#totalChanges.finalize();
    }
  }

  /** One statement, or what stops it: nothing but comments, or a trigger body cut at its `;`. */
  #prepare(text: string, isLast: boolean): KeptStatement | 'nothing' | 'incomplete' {
    try {
      return { prepared: this.#db.prepare(text), takes: new Map() };
    } catch (error) {
      const message = messageOf(error);
      if (message === NOTHING_TO_PREPARE) return 'nothing';
      if (message.includes(INCOMPLETE_INPUT) && !isLast) return 'incomplete';
      throw error;
    }
  }

  #changes(): number {
    // all(), not get(): get() leaves the statement mid-step, an open read that blocks VACUUM and checkpoints.
    return (this.#totalChanges.all()[0] as { n: number }).n;
  }
}

/** Runs one statement with `values`: none for a statement before the last. */
function runStatement(statement: KeptStatement, values: BindingValue[]): { columns: string[]; rows: Row[] } {
  const internals = statement.prepared as unknown as StatementInternals;
  let takes = statement.takes.get(values.length);
  if (takes === undefined) {
    takes = hasParameterCount(internals, values.length);
    statement.takes.set(values.length, takes);
  }
  if (!takes) throw new Error(WRONG_BINDING_COUNT);
  bindValues(statement.prepared, values);
  return readRows(statement.prepared);
}

/**
 * Whether the statement has exactly `count` parameters. Cloudflare refuses any other binding
 * count, where the binding would fill missing ones with NULL; the binding exposes no count, so it
 * is probed: a statement accepts k bindings exactly when it has k parameters or more.
 */
function hasParameterCount(statement: StatementInternals, count: number): boolean {
  const accepts = (k: number): boolean => {
    try {
      statement._bind(new Array<null>(k).fill(null));
      return true;
    } catch {
      return false;
    }
  };
  return accepts(count) && !accepts(count + 1);
}

function toBindingValue(value: unknown, index: number): BindingValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(formatUnsupportedBinding(index, value));
}

/** Statements Cloudflare refuses in `exec` (its authorizer denies transactions and savepoints). */
const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

function stripLeadingComments(text: string): string {
  return text.replace(/^(\s|--[^\n]*(\n|$)|\/\*[\s\S]*?(\*\/|$))*/, '');
}
