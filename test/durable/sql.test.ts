/**
 * `storage.sql` against Cloudflare's contract: the expectations are those of workerd's own SQL
 * tests and its `SqlStorage` (texts word for word, INTEGER as a number, BLOB as an ArrayBuffer,
 * multi-statement queries, refused transactions), on a real SQLite file. And the members of
 * DurableObjectState this state does not provide: each throws a text naming it.
 */
import { statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DurableState, openDurableState } from '../../src/durable/index.js';
import { serveWorkerd } from '../support/workerd.js';

let dir: string;
let ctx: DurableState;
const sql = () => ctx.storage.sql;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-sql-'));
  ctx = await openDurableState({ path: dir, exports: {} });
});

afterEach(async () => {
  await ctx.close();
  await rm(dir, { recursive: true, force: true });
});

describe('sql.exec', () => {
  it('gives numbers, strings, ArrayBuffer blobs and null, by column name and raw', () => {
    const row = sql().exec("SELECT 123 AS n, 1.5 AS f, 'hello' AS s, x'ff00' AS b, NULL AS z").one();
    expect(row).toMatchObject({ n: 123, f: 1.5, s: 'hello', z: null });
    expect(row.b).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(row.b as ArrayBuffer)]).toEqual([255, 0]);
    expect([...sql().exec('SELECT 123').raw()]).toEqual([[123]]);
    expect(sql().exec('SELECT 1 AS a, 2 AS b').columnNames).toEqual(['a', 'b']);
  });

  it('gives an INTEGER beyond 2^53 as a number, as workerd coerces it', () => {
    expect(sql().exec('SELECT 9007199254740993 AS big').one().big).toBe(9007199254740992);
  });

  it('binds numbers, strings, null, undefined and binary', () => {
    expect(sql().exec('SELECT ? + ? AS sum', 123, 456).one()).toEqual({ sum: 579 });
    expect(sql().exec('SELECT ? AS a, ? AS b', null, undefined).one()).toEqual({ a: null, b: null });
    const blob = sql()
      .exec('SELECT ? AS b', new Uint8Array([1, 2, 3]))
      .one().b as ArrayBuffer;
    expect([...new Uint8Array(blob)]).toEqual([1, 2, 3]);
    expect(() => sql().exec('SELECT ?', true)).toThrow('binding 1 is true');
    expect(() => sql().exec('SELECT ?', 1n)).toThrow('binding 1 is 1');
  });

  it('iterates with next(), toArray() and for-of, each consuming the rows', () => {
    const query = "SELECT 1 AS col UNION ALL SELECT 'foo' AS col UNION ALL SELECT 3 AS col";
    const cursor = sql().exec(query);
    expect(cursor.next()).toEqual({ done: false, value: { col: 1 } });
    expect(cursor.toArray()).toEqual([{ col: 'foo' }, { col: 3 }]);
    expect(cursor.next()).toEqual({ done: true, value: undefined });
    expect([...sql().exec(query)].map((row) => row.col)).toEqual([1, 'foo', 3]);
  });

  it("one() throws Cloudflare's texts on no row and on several", () => {
    sql().exec('CREATE TABLE empty (x INTEGER)');
    expect(() => sql().exec('SELECT * FROM empty').one()).toThrow(
      'Expected exactly one result from SQL query, but got no results.',
    );
    expect(() => sql().exec('SELECT 1 UNION ALL SELECT 2').one()).toThrow(
      'Expected exactly one result from SQL query, but got multiple results.',
    );
  });

  it('counts rows written and rows read', () => {
    sql().exec('CREATE TABLE t (a INTEGER)');
    expect(sql().exec('INSERT INTO t VALUES (1), (2), (3)').rowsWritten).toBe(3);
    expect(sql().exec('UPDATE t SET a = a + 1 WHERE a > 1').rowsWritten).toBe(2);
    expect(sql().exec("UPDATE t SET a = 0 WHERE a = 'none'").rowsWritten).toBe(0);
    const cursor = sql().exec('SELECT * FROM t');
    expect(cursor.rowsWritten).toBe(0);
    cursor.toArray();
    expect(cursor.rowsRead).toBe(3);
  });

  it("runs every statement of a multi-statement query and returns the last one's rows", () => {
    const cursor = sql().exec(`
      CREATE TABLE a (x TEXT);
      INSERT INTO a VALUES ('semi;colon'), ('-- not a comment');
      CREATE TRIGGER a_copy AFTER INSERT ON a BEGIN INSERT INTO a_log VALUES (new.x); END;
      CREATE TABLE a_log (x TEXT);
      SELECT x FROM a ORDER BY x;
    `);
    expect(cursor.toArray()).toEqual([{ x: '-- not a comment' }, { x: 'semi;colon' }]);
    sql().exec('INSERT INTO a VALUES (?)', 'fired');
    expect(sql().exec('SELECT x FROM a_log').toArray()).toEqual([{ x: 'fired' }]);
    expect(sql().exec('SELECT 1; SELECT ? AS b', 2).toArray()).toEqual([{ b: 2 }]);
  });

  it('refuses what workerd refuses, with its texts', () => {
    expect(() => sql().exec('SELECT ?')).toThrow('Wrong number of parameter bindings for SQL query.');
    expect(() => sql().exec('SELECT ?', 1, 2)).toThrow('Wrong number of parameter bindings for SQL query.');
    expect(() => sql().exec('SELECT ?; SELECT 1')).toThrow('Wrong number of parameter bindings for SQL query.');
    expect(() => sql().exec('')).toThrow('SQL code did not contain a statement');
    expect(() => sql().exec(';')).toThrow('SQL code did not contain a statement');
    expect(() => sql().exec('SELECT 123; SELECT 456; -- trailing comment')).toThrow(
      'SQL code did not contain a statement',
    );
    expect(() => sql().exec('BEGIN TRANSACTION')).toThrow(
      /please use the state.storage.transaction\(\) or state.storage.transactionSync\(\) APIs/,
    );
    expect(() => sql().exec('SAVEPOINT foo')).toThrow(
      /please use the state.storage.transaction\(\) or state.storage.transactionSync\(\) APIs/,
    );
    expect(() => sql().exec('SELECT ;')).toThrow(/syntax error/);
  });

  it("leaves no statement open between calls, so SQLite's checkpoints keep the write-ahead log bounded", () => {
    sql().exec('CREATE TABLE big (x TEXT)');
    // 2,000 commits of 8 KB: 16 MB through the log, four times SQLite's default checkpoint size.
    for (let i = 0; i < 2_000; i++) sql().exec('INSERT INTO big VALUES (?)', 'x'.repeat(8_000));
    expect(statSync(join(dir, 'state.sqlite-wal')).size).toBeLessThan(8_000_000);
  });

  it('runs a statement again, as kept prepared, on the schema as it is now', () => {
    sql().exec('CREATE TABLE t (a INTEGER)');
    sql().exec('INSERT INTO t VALUES (?)', 1);
    expect(sql().exec('SELECT * FROM t').columnNames).toEqual(['a']);
    sql().exec('ALTER TABLE t ADD COLUMN b INTEGER DEFAULT 2');
    const again = sql().exec('SELECT * FROM t');
    expect(again.columnNames).toEqual(['a', 'b']);
    expect(again.toArray()).toEqual([{ a: 1, b: 2 }]);
    expect(sql().exec('INSERT INTO t VALUES (?, ?)', 3, 4).rowsWritten).toBe(1);
  });

  it('gives the same rows from a statement run before and after a hundred others', () => {
    sql().exec('CREATE TABLE t (n INTEGER)');
    sql().exec('INSERT INTO t VALUES (?)', 5);
    expect(sql().exec('SELECT n FROM t WHERE n = ?', 5).toArray()).toEqual([{ n: 5 }]);
    for (let i = 0; i < 100; i++) expect(sql().exec(`SELECT n + ${i} AS m FROM t`).one().m).toBe(5 + i);
    expect(sql().exec('SELECT n FROM t WHERE n = ?', 5).toArray()).toEqual([{ n: 5 }]);
  });

  it('reports the database size in pages in use', () => {
    const before = sql().databaseSize;
    sql().exec('CREATE TABLE big (x TEXT)');
    sql().exec('INSERT INTO big VALUES (?)', 'x'.repeat(100_000));
    expect(sql().databaseSize).toBeGreaterThan(before + 100_000);
  });
});

describe('strings, as workerd keeps them', () => {
  /** One code point from each of Unicode's seventeen planes, and the last one. */
  const everyPlane = Array.from({ length: 17 }, (_, plane) => String.fromCodePoint(plane * 0x10000 + 0x41)).join('');
  const STRINGS: Record<string, string> = {
    nul: 'before\0after',
    nulOnly: '\0',
    nulAtEnds: '\0middle\0',
    loneHigh: 'a\ud800b',
    loneLow: 'a\udc00b',
    loneHighLong: 'a string longer than sixteen bytes\ud800',
    reversedPair: '\udc00\ud800',
    pair: '\u{1F600}',
    everyPlane,
    lastCodePoint: '\u{10FFFF}',
    nonCharacter: '\uFFFF',
    bom: '\uFEFF',
  };

  /** What a store, then a read, gives for each string: in a table, and straight back. */
  const PROBE = `(sql, strings) => {
    const points = (s) => (typeof s === 'string' ? [...s].map((c) => c.codePointAt(0)) : s);
    sql.exec('CREATE TABLE IF NOT EXISTS strings (k TEXT, v TEXT)');
    const out = {};
    for (const [k, v] of Object.entries(strings)) {
      sql.exec('INSERT INTO strings VALUES (?, ?)', k, v);
      const row = sql.exec('SELECT v, length(v) AS len, typeof(v) AS type, hex(v) AS hex FROM strings WHERE k = ?', k).one();
      out[k] = { stored: points(row.v), len: row.len, type: row.type, hex: row.hex, direct: points(sql.exec('SELECT ? AS v', v).one().v) };
    }
    return out;
  }`;

  async function observeInWorkerd(): Promise<unknown> {
    const disk = await mkdtemp(join(tmpdir(), 'durable-sql-workerd-'));
    await mkdir(join(disk, 'objects'));
    const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .main), (name = "disk", disk = (path = "${join(disk, 'objects')}", writable = true)) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const main :Workerd.Worker = (
  modules = [ (name = "main.js", esModule = embed "main.js") ],
  compatibilityDate = "2026-04-01",
  durableObjectNamespaces = [ (className = "Store", uniqueKey = "store", enableSql = true) ],
  durableObjectStorage = (localDisk = "disk"),
  bindings = [ (name = "S", durableObjectNamespace = "Store") ],
);`;
    const main = `import { DurableObject } from 'cloudflare:workers';
export class Store extends DurableObject {
  probe(strings) { return (${PROBE})(this.ctx.storage.sql, strings); }
}
export default {
  async fetch(request, env) {
    return Response.json(await env.S.get(env.S.idFromName('x')).probe(${JSON.stringify(STRINGS)}));
  },
};`;
    const worker = await serveWorkerd({ 'config.capnp': config, 'main.js': main });
    try {
      return await (await fetch(worker.url)).json();
    } finally {
      await worker.stop();
      await rm(disk, { recursive: true, force: true });
    }
  }

  it('stores and reads every string exactly as workerd does: NUL kept, lone surrogates, every plane', async () => {
    const probe = new Function(`return ${PROBE}`)() as (sql: unknown, strings: Record<string, string>) => unknown;
    const ours = probe(sql(), STRINGS);
    const theirs = await observeInWorkerd();
    expect(ours).toEqual(theirs);
    // And what that is, so a workerd that changed would be seen here too.
    expect((theirs as Record<string, { stored: number[] }>).nul?.stored).toEqual(
      [...STRINGS.nul!].map((c) => c.codePointAt(0)),
    );
  });

  it('keeps a NUL in stored code whole after a reopen', async () => {
    sql().exec('CREATE TABLE code (source TEXT)');
    sql().exec('INSERT INTO code VALUES (?)', 'async () => "a\0b".length');
    await ctx.close();
    ctx = await openDurableState({ path: dir, exports: {} });
    expect(sql().exec('SELECT source FROM code').one().source).toBe('async () => "a\0b".length');
  });
});

describe('the members this state does not provide', () => {
  it.each([
    ['ctx', 'waitUntil'],
    ['ctx', 'blockConcurrencyWhile'],
    ['ctx', 'id'],
    ['ctx', 'acceptWebSocket'],
    ['ctx.storage', 'get'],
    ['ctx.storage', 'put'],
    ['ctx.storage', 'transactionSync'],
    ['ctx.storage', 'setAlarm'],
    ['ctx.storage', 'kv'],
    ['ctx.facets', 'delete'],
    ['ctx.facets', 'abort'],
  ])('%s.%s throws a text naming it', (owner, member) => {
    const target = (owner === 'ctx' ? ctx : owner === 'ctx.storage' ? ctx.storage : ctx.facets) as unknown as Record<
      string,
      unknown
    >;
    expect(() => target[member]).toThrow(`${owner}.${member} is not provided by openDurableState()`);
  });

  it('leaves other names undefined, as on any object, so awaiting the state works', async () => {
    expect((ctx as unknown as Record<string, unknown>).then).toBeUndefined();
    expect((ctx.storage as unknown as Record<string, unknown>).somethingElse).toBeUndefined();
  });
});
