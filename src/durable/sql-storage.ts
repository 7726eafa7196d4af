/**
 * `storage.sql`: Cloudflare's synchronous SQL API over one SQLite file of the WebAssembly binding.
 * `exec` runs every statement of its query at once, in order, binding the last one, and returns
 * a cursor over the last one's rows, with values as Cloudflare gives them (INTEGER as a number,
 * BLOB as an ArrayBuffer).
 */
import type { Database, Statement } from 'node-sqlite3-wasm';
import { splitAtSemicolons } from './split-statements.js';
import {
  BINDINGS_ON_MULTIPLE_STATEMENTS,
  formatClosed,
  formatUnsafeInteger,
  formatUnsupportedBinding,
  formatWrongBindingCount,
  ONE_MANY_ROWS,
  ONE_NO_ROWS,
  SQL_QUERY_NOT_STRING,
} from './texts.js';

export type SqlValue = ArrayBuffer | string | number | null;
type Row = Record<string, SqlValue>;
type BindingValue = string | number | null | Uint8Array;

/** The binding's statement internals used here; the binding is pinned to one exact version. */
interface StatementInternals {
  _bind(values: BindingValue[]): void;
  _getColumnNames(): string[];
}

const NOTHING_TO_PREPARE = 'Nothing to prepare';
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
  #closed = false;

  constructor(db: Database) {
    this.#db = db;
    this.#totalChanges = db.prepare('SELECT total_changes() AS n');
  }

  get databaseSize(): number {
    if (this.#closed) throw new Error(formatClosed('storage.sql'));
    const pages = this.#db.get('PRAGMA page_count') as { page_count: number };
    const size = this.#db.get('PRAGMA page_size') as { page_size: number };
    return pages.page_count * size.page_size;
  }

  exec(query: string, ...bindings: unknown[]): SqlCursor {
    if (this.#closed) throw new Error(formatClosed('storage.sql'));
    if (typeof query !== 'string') throw new TypeError(SQL_QUERY_NOT_STRING);
    const values = bindings.map(toBindingValue);
    const changesBefore = this.#changes();
    const pieces = splitAtSemicolons(query);
    let pending = '';
    let last: { columns: string[]; rows: Row[] } = { columns: [], rows: [] };
    for (let index = 0; index < pieces.length; index++) {
      pending += pieces[index];
      const isLast = pieces.slice(index + 1).every(isBlank);
      const statement = this.#prepare(pending, isLast);
      if (statement === 'incomplete' && !isLast) continue;
      pending = '';
      if (statement === 'blank' || statement === 'incomplete') continue;
      try {
        last = runStatement(statement, isLast ? values : undefined);
      } finally {
        statement.finalize();
      }
      if (isLast) break;
    }
    return new SqlCursor(last.columns, last.rows, this.#changes() - changesBefore);
  }

  /** Ends this storage: the statement it keeps is finalized; its owner closes the database. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#totalChanges.finalize();
  }

  #prepare(text: string, isLast: boolean): Statement | 'blank' | 'incomplete' {
    try {
      return this.#db.prepare(text);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message === NOTHING_TO_PREPARE) return 'blank';
      if (message.includes(INCOMPLETE_INPUT) && !isLast) return 'incomplete';
      throw error;
    }
  }

  #changes(): number {
    return (this.#totalChanges.get() as { n: number }).n;
  }
}

/** Runs one statement; `values` is undefined for a statement before the last, which takes none. */
function runStatement(statement: Statement, values: BindingValue[] | undefined): { columns: string[]; rows: Row[] } {
  const internals = statement as unknown as StatementInternals;
  const given = values ?? [];
  const expected = parameterCount(internals, given.length);
  if (values === undefined && expected > 0) throw new Error(BINDINGS_ON_MULTIPLE_STATEMENTS);
  if (expected !== given.length) throw new Error(formatWrongBindingCount(expected, given.length));
  const columns = internals._getColumnNames();
  const rows = statement.all(given).map((row) => toCloudflareRow(row as Record<string, unknown>));
  return { columns, rows };
}

/**
 * The statement's parameter count. Cloudflare refuses a binding count that differs from it, where
 * the binding would fill missing ones with NULL; the binding exposes no count, so it is probed: a
 * statement accepts k bindings exactly when it has k parameters or more. The likely answer, the
 * count given, is tried first.
 */
function parameterCount(statement: StatementInternals, likely: number): number {
  const accepts = (count: number): boolean => {
    try {
      statement._bind(new Array<null>(count).fill(null));
      return true;
    } catch {
      return false;
    }
  };
  if (accepts(likely) && !accepts(likely + 1)) return likely;
  let count = 0;
  while (accepts(count + 1)) count++;
  return count;
}

function toBindingValue(value: unknown, index: number): BindingValue {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(formatUnsupportedBinding(index, value));
}

function toCloudflareRow(row: Record<string, unknown>): Row {
  const out: Row = {};
  for (const [column, value] of Object.entries(row)) {
    if (typeof value === 'bigint') throw new RangeError(formatUnsafeInteger(column, value));
    if (value instanceof Uint8Array)
      out[column] = value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength) as ArrayBuffer;
    else out[column] = value as SqlValue;
  }
  return out;
}

/** A piece holding nothing but whitespace, comments and semicolons. */
function isBlank(piece: string): boolean {
  return piece.replace(/--[^\n]*(\n|$)|\/\*[\s\S]*?(\*\/|$)|[\s;]/g, '') === '';
}
