/**
 * The durable state's SQLite binding, measured (docs/durable-state.md, "The SQLite binding"):
 * which candidates this Node has, the binding's load time in a fresh process, openDurableState's
 * open and close, a committed write and a keyed read under each journal setting, the same through
 * `storage.sql.exec`, and crash safety: a writer SIGKILLed mid-stream, `--kills` times, must leave
 * every write it saw committed, in a file that passes SQLite's integrity check.
 *
 *   npx tsx bench/durable-sqlite.ts [--runs 300] [--kills 10]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import sqlite from 'node-sqlite3-wasm';
import { openDurableState } from '../src/durable/index.js';
import { ms, printTable, summarize } from './stats.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '300' },
    kills: { type: 'string', default: '10' },
    writer: { type: 'string' },
  },
});
const RUNS = Number(values.runs);
const KILLS = Number(values.kills);
for (const [name, value] of [
  ['--runs', RUNS],
  ['--kills', KILLS],
] as const) {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
}
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** A writer stops by itself after this long if nobody kills it. */
const WRITER_LIMIT_MS = 10_000;

if (values.writer) await runWriter(values.writer);
else await measure();

async function measure(): Promise<void> {
  const nodeSqlite = await import('node:sqlite' as string).then(
    () => 'available',
    (error: Error) => `not available (${error.message.split('\n')[0]})`,
  );
  console.log(`Node ${process.version}; node:sqlite ${nodeSqlite}; node-sqlite3-wasm ${wasmVersion()}\n`);

  const loads = Array.from({ length: 5 }, () => loadTimeInFreshProcess());
  console.log(`loading node-sqlite3-wasm in a fresh process: p50 ${ms(summarize(loads).p50)} (5 processes)\n`);

  const opens: number[] = [];
  const closes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'bench-durable-'));
    let start = performance.now();
    const state = await openDurableState({ path: dir, exports: {} });
    opens.push(performance.now() - start);
    start = performance.now();
    await state.close();
    closes.push(performance.now() - start);
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `openDurableState (lock + database): p50 ${ms(summarize(opens).p50)}; close: p50 ${ms(summarize(closes).p50)}\n`,
  );

  const rows: string[][] = [];
  for (const [journal, synchronous] of [
    ['DELETE', 'FULL'],
    ['WAL', 'FULL'],
    ['WAL', 'NORMAL'],
  ] as const) {
    const { write, read } = writeAndRead(journal, synchronous);
    rows.push([
      `binding, journal ${journal}, synchronous ${synchronous}`,
      ms(write.p50, 3),
      ms(write.p95, 3),
      ms(read.p50, 3),
    ]);
  }
  const through = await writeAndReadThroughState();
  rows.push([
    'storage.sql.exec (WAL, FULL: what the state uses)',
    ms(through.write.p50, 3),
    ms(through.write.p95, 3),
    ms(through.read.p50, 3),
  ]);
  printTable(['one committed INSERT / keyed SELECT', 'write p50', 'write p95', 'read p50'], rows);

  let intact = 0;
  for (let kill = 0; kill < KILLS; kill++) if (await killWriter()) intact++;
  console.log(
    `\nSIGKILL of a writer mid-stream: ${intact} of ${KILLS} reopened with every write it saw committed and integrity_check "ok"`,
  );
}

function wasmVersion(): string {
  return (createRequire(import.meta.url)('node-sqlite3-wasm/package.json') as { version: string }).version;
}

function loadTimeInFreshProcess(): number {
  const script = "const t = performance.now(); require('node-sqlite3-wasm'); console.log(performance.now() - t)";
  const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  return Number(result.stdout.trim());
}

function writeAndRead(journal: string, synchronous: string) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-durable-'));
  const db = new sqlite.Database(join(dir, 'state.sqlite'));
  try {
    db.all('PRAGMA locking_mode = EXCLUSIVE');
    db.all(`PRAGMA journal_mode = ${journal}`);
    db.all(`PRAGMA synchronous = ${synchronous}`);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const select = db.prepare('SELECT * FROM t WHERE id = ?');
    const writes: number[] = [];
    const reads: number[] = [];
    for (let i = 1; i <= RUNS; i++) {
      let start = performance.now();
      insert.run(['x'.repeat(200)]);
      writes.push(performance.now() - start);
      start = performance.now();
      select.all([i]);
      reads.push(performance.now() - start);
    }
    insert.finalize();
    select.finalize();
    return { write: summarize(writes), read: summarize(reads) };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function writeAndReadThroughState() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-durable-'));
  const state = await openDurableState({ path: dir, exports: {} });
  try {
    const sql = state.storage.sql;
    sql.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const writes: number[] = [];
    const reads: number[] = [];
    for (let i = 1; i <= RUNS; i++) {
      let start = performance.now();
      sql.exec('INSERT INTO t (v) VALUES (?)', 'x'.repeat(200));
      writes.push(performance.now() - start);
      start = performance.now();
      sql.exec('SELECT * FROM t WHERE id = ?', i).toArray();
      reads.push(performance.now() - start);
    }
    return { write: summarize(writes), read: summarize(reads) };
  } finally {
    await state.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts a writer, kills it a random 50 to 300 ms after its first commit, and checks what it left. */
async function killWriter(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-durable-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/durable-sqlite.ts', '--writer', dir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acknowledged = 0;
    let buffer = '';
    let firstCommit: () => void = () => {};
    const committed = new Promise<void>((resolve) => {
      firstCommit = resolve;
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line) acknowledged = Number(line);
      if (acknowledged > 0) firstCommit();
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await Promise.race([committed, exited]);
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 250));
    child.kill('SIGKILL');
    await exited;
    const state = await openDurableState({ path: dir, exports: {} });
    try {
      const check = state.storage.sql.exec('PRAGMA integrity_check').one().integrity_check;
      const last = state.storage.sql.exec('SELECT max(id) AS last FROM t').one().last as number | null;
      return acknowledged > 0 && check === 'ok' && (last ?? 0) >= acknowledged;
    } finally {
      await state.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The writer: inserts rows one commit at a time, printing each id once its commit has returned. */
async function runWriter(dir: string): Promise<void> {
  const state = await openDurableState({ path: dir, exports: {} });
  state.storage.sql.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const deadline = Date.now() + WRITER_LIMIT_MS;
  for (let id = 1; Date.now() < deadline; id++) {
    state.storage.sql.exec('INSERT INTO t (id, v) VALUES (?, ?)', id, 'x'.repeat(200));
    process.stdout.write(`${id}\n`);
  }
  await state.close();
}
