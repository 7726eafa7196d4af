/**
 * node-sqlite3-wasm, loaded in a scope of the state's own, with three things its public API lacks:
 *
 * - its memory, so a string is bound by its length and read by its length: the binding's own
 *   `bind_text` and `column_text` stop at the first NUL, where workerd keeps `'a\0b'` whole;
 * - the file calls of its virtual file system go through `fs` with `O_NOFOLLOW` added, so SQLite
 *   never opens a database file, journal or log through a symbolic link, and creates them 0600;
 * - the errno of the last failed file call, which its VFS drops (it answers SQLITE_IOERR for
 *   every failure), so a full disk is told apart from a failing one.
 *
 * The binding is pinned to one exact version (package.json), and its source is evaluated as
 * Node's CommonJS loader would, with its own `require` answering `node:fs` with the wrapper.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { compileFunction } from 'node:vm';
import type * as Binding from 'node-sqlite3-wasm';

/** What a failed file call of the binding's VFS left: its errno code and the file it touched. */
export interface FileFault {
  code: string;
  path: string | undefined;
}

interface Exports {
  Database: typeof Binding.Database;
  _malloc(size: number): number;
  _free(pointer: number): void;
  _sqlite3_bind_text(statement: number, index: number, text: number, bytes: number, destructor: number): number;
  _sqlite3_column_type(statement: number, column: number): number;
  _sqlite3_column_int64(statement: number, column: number): bigint;
  _sqlite3_column_double(statement: number, column: number): number;
  _sqlite3_column_text(statement: number, column: number): number;
  _sqlite3_column_blob(statement: number, column: number): number;
  _sqlite3_column_bytes(statement: number, column: number): number;
  /** Added here: the binding's heap as it is now (it is replaced when the memory grows). */
  __heap(): Uint8Array;
}

const requireHere = createRequire(import.meta.url);
const ENTRY = requireHere.resolve('node-sqlite3-wasm');

let lastFault: FileFault | undefined;
/** File descriptors the binding opened, by path, so a failed write can name its file. */
const openedPaths = new Map<number, string>();

function recordFault(error: unknown, path: string | undefined): never {
  const code = (error as { code?: unknown } | null)?.code;
  lastFault = { code: typeof code === 'string' ? code : 'EIO', path };
  throw error;
}

/** `node:fs` as the binding sees it: no link followed, new files 0600, every failure recorded. */
const guardedFs: typeof fs = Object.assign(Object.create(fs) as typeof fs, {
  openSync(path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode | null): number {
    const noFollow = typeof flags === 'number' ? flags | fs.constants.O_NOFOLLOW : (flags ?? 'r');
    try {
      const fd = fs.openSync(path, noFollow, typeof flags === 'number' ? 0o600 : mode);
      openedPaths.set(fd, String(path));
      return fd;
    } catch (error) {
      return recordFault(error, String(path));
    }
  },
  closeSync(fd: number): void {
    openedPaths.delete(fd);
    fs.closeSync(fd);
  },
  /**
   * The binding calls `writeSync(fd, bytes, 0, length, position)` and counts a short write as an
   * I/O error without its cause; writing the rest, as POSIX code does, makes a full disk say so.
   */
  writeSync(fd: number, bytes: Uint8Array, offset: number, length: number, position: number): number {
    let written = 0;
    try {
      while (written < length) {
        const wrote = fs.writeSync(fd, bytes, offset + written, length - written, position + written);
        if (wrote === 0) break;
        written += wrote;
      }
      return written;
    } catch (error) {
      return recordFault(error, openedPaths.get(fd));
    }
  },
  ftruncateSync(fd: number, length?: number): void {
    try {
      fs.ftruncateSync(fd, length);
    } catch (error) {
      recordFault(error, openedPaths.get(fd));
    }
  },
  fsyncSync(fd: number): void {
    try {
      fs.fsyncSync(fd);
    } catch (error) {
      recordFault(error, openedPaths.get(fd));
    }
  },
});

function load(): Exports {
  const source = fs.readFileSync(ENTRY, 'utf8');
  const run = compileFunction(`${source}\n;module.exports.__heap = () => HEAPU8;`, [
    'exports',
    'require',
    'module',
    '__filename',
    '__dirname',
  ]);
  const module = { exports: {} as Exports };
  const requireForBinding = (id: string) => (id === 'node:fs' || id === 'fs' ? guardedFs : requireHere(id));
  run(module.exports, requireForBinding, module, ENTRY, dirname(ENTRY));
  return module.exports;
}

export const binding: Exports = load();

/** The last failed file call of the binding, cleared as it is read. */
export function takeFileFault(): FileFault | undefined {
  const fault = lastFault;
  lastFault = undefined;
  return fault;
}
