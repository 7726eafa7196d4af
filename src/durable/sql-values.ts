/**
 * Values across the SQLite boundary as workerd's SqlStorage moves them, measured against it
 * (test/durable/sql.test.ts): a string is bound by its length, so a NUL is kept; a lone surrogate
 * is stored as its three WTF-8 bytes (`ED A0 80` for U+D800), as V8 writes it; a TEXT value is
 * read by its length and decoded as UTF-8, each invalid byte becoming U+FFFD, as workerd reads it.
 * INTEGER is a number (beyond 2^53 with a double's precision), BLOB an ArrayBuffer.
 */
import type { Statement } from 'node-sqlite3-wasm';
import { binding } from './sqlite-binding.js';

export type SqlValue = ArrayBuffer | string | number | null;
export type Row = Record<string, SqlValue>;
export type BindingValue = string | number | null | Uint8Array;

/** The binding's statement internals used here; the binding is pinned to one exact version. */
interface StatementInternals {
  _ptr: number;
  _bind(values: BindingValue[]): void;
  _step(): boolean;
  _getColumnNames(): string[];
}

const SQLITE_INTEGER = 1;
const SQLITE_FLOAT = 2;
const SQLITE_TEXT = 3;
const SQLITE_BLOB = 4;
/** SQLite copies the bytes before bind_text returns. */
const SQLITE_TRANSIENT = -1;
const SQLITE_OK = 0;

/** In a `u` regex a well-formed pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Cs}/u;
// ignoreBOM: a leading U+FEFF is data, which workerd keeps.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = new TextEncoder();

/** Binds `values` (1-based positions); strings by their length, everything else as the binding does. */
export function bindValues(statement: Statement, values: BindingValue[]): void {
  const internals = statement as unknown as StatementInternals;
  internals._bind(values.map((value) => (typeof value === 'string' ? null : value)));
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (typeof value === 'string') bindText(internals._ptr, index + 1, value);
  }
}

function bindText(statement: number, position: number, text: string): void {
  // Three bytes per UTF-16 unit is the most either encoding takes.
  const capacity = text.length * 3 + 1;
  const pointer = binding._malloc(capacity);
  try {
    const length = writeWtf8(text, binding.__heap().subarray(pointer, pointer + capacity));
    const code = binding._sqlite3_bind_text(statement, position, pointer, length, SQLITE_TRANSIENT);
    if (code !== SQLITE_OK) throw new Error(`SQLite could not bind a string (code ${code})`);
  } finally {
    binding._free(pointer);
  }
}

/** Writes `text` as UTF-8, a lone surrogate as its own three bytes (WTF-8); returns the length. */
function writeWtf8(text: string, into: Uint8Array): number {
  if (!LONE_SURROGATE.test(text)) return encoder.encodeInto(text, into).written;
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.codePointAt(i) as number;
    if (unit <= 0x7f) into[at++] = unit;
    else if (unit <= 0x7ff) {
      into[at++] = 0xc0 | (unit >> 6);
      into[at++] = 0x80 | (unit & 0x3f);
    } else if (unit <= 0xffff) {
      into[at++] = 0xe0 | (unit >> 12);
      into[at++] = 0x80 | ((unit >> 6) & 0x3f);
      into[at++] = 0x80 | (unit & 0x3f);
    } else {
      into[at++] = 0xf0 | (unit >> 18);
      into[at++] = 0x80 | ((unit >> 12) & 0x3f);
      into[at++] = 0x80 | ((unit >> 6) & 0x3f);
      into[at++] = 0x80 | (unit & 0x3f);
      i++;
    }
  }
  return at;
}

/** Steps `statement` (bound already) to its end: its column names and its rows. */
export function readRows(statement: Statement): { columns: string[]; rows: Row[] } {
  const internals = statement as unknown as StatementInternals;
  const columns = internals._getColumnNames();
  const rows: Row[] = [];
  const pointer = internals._ptr;
  while (internals._step()) {
    const row: Row = {};
    for (let column = 0; column < columns.length; column++)
      row[columns[column] as string] = readColumn(pointer, column);
    rows.push(row);
  }
  return { columns, rows };
}

function readColumn(statement: number, column: number): SqlValue {
  switch (binding._sqlite3_column_type(statement, column)) {
    case SQLITE_INTEGER:
      return Number(binding._sqlite3_column_int64(statement, column));
    case SQLITE_FLOAT:
      return binding._sqlite3_column_double(statement, column);
    case SQLITE_TEXT: {
      // text first, then bytes: SQLite's order for a value read as text.
      const text = binding._sqlite3_column_text(statement, column);
      const length = binding._sqlite3_column_bytes(statement, column);
      return decoder.decode(binding.__heap().subarray(text, text + length));
    }
    case SQLITE_BLOB: {
      const blob = binding._sqlite3_column_blob(statement, column);
      const length = binding._sqlite3_column_bytes(statement, column);
      return blob === 0 ? new ArrayBuffer(0) : binding.__heap().slice(blob, blob + length).buffer;
    }
    default:
      return null;
  }
}
