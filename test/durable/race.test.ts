/**
 * Several processes opening one fresh path at once, a state renamed under its holder, and a path
 * swapped under an open: one writer per path, always, and no acknowledged row lost. The races are not left to chance: each
 * host's `flock` is a wrapper (fixtures/slow-flock) that waits for files the test creates, so the
 * test decides which process is where when another one moves.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DurableState, openDurableState } from '../../src/durable/index.js';
import { type HostProcess, killAllHosts, runHost, startHost } from './support/host-process.js';

const { DurableObject } = (await import(new URL('../../src/register/cloudflare-workers.js', import.meta.url).href)) as {
  DurableObject: new (ctx: unknown, env: unknown) => { ctx: unknown; env: unknown };
};

const SLOW_FLOCK_DIR = fileURLToPath(new URL('fixtures/slow-flock', import.meta.url));
const REAL_FLOCK = execFileSync('sh', ['-c', 'command -v flock'], { encoding: 'utf8' }).trim();
/** What each `hold-write` host inserts (fixtures/host.ts). */
const ACKNOWLEDGED_ROWS = 20;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-race-'));
});

afterEach(async () => {
  await killAllHosts();
  await rm(dir, { recursive: true, force: true });
});

afterAll(killAllHosts);

/** A host whose `flock` waits on the named files (names under `dir`; see fixtures/slow-flock/flock). */
function slowHost(
  path: string,
  files: { started?: string; before?: string; locked?: string; after?: string; replace?: string } = {},
  command = 'hold-write',
): HostProcess {
  const env: Record<string, string> = { PATH: `${SLOW_FLOCK_DIR}:${process.env.PATH}`, REAL_FLOCK };
  if (files.started) env.SLOW_FLOCK_STARTED = join(dir, files.started);
  if (files.before) env.SLOW_FLOCK_BEFORE = join(dir, files.before);
  if (files.locked) env.SLOW_FLOCK_LOCKED = join(dir, files.locked);
  if (files.after) env.SLOW_FLOCK_AFTER = join(dir, files.after);
  if (files.replace) env.SLOW_FLOCK_REPLACE = join(dir, files.replace);
  return startHost([command, path], { env });
}

async function appears(name: string): Promise<void> {
  while (!existsSync(join(dir, name))) await new Promise((resolve) => setTimeout(resolve, 20));
}

const open = (name: string) => writeFile(join(dir, name), '');
const answered = (host: HostProcess) => host.line((line) => 'open' in line || 'error' in line);

/** The rows in the state at `path`, by writer, once no one holds it. */
async function rowsByWriter(path: string): Promise<Record<number, number>> {
  const state = await openDurableState({ path, exports: {} });
  try {
    const rows = state.storage.sql.exec('SELECT writer, count(*) AS n FROM rows GROUP BY writer').toArray();
    return Object.fromEntries(rows.map((row) => [row.writer as number, row.n as number]));
  } finally {
    await state.close();
  }
}

describe('five processes open one fresh path at once', () => {
  it('one holds it; the others are refused, naming it; nobody removes its directory; no acknowledged row is lost', async () => {
    const path = join(dir, 'state');
    // A starts creating the path and waits, before its lock, for the test.
    const a = slowHost(path, { started: 'a-started', before: 'a-go' });
    await appears('a-started');
    // B takes its lock next, and holds back its answer until the test lets it go.
    const b = slowHost(path, { locked: 'b-locked', after: 'b-go' });
    await appears('b-locked');
    // A goes on: on main it is refused (B has the directory A made), and removes that directory.
    await open('a-go');
    const answerA = await answered(a);
    // Three more arrive at once.
    const late = [slowHost(path), slowHost(path), slowHost(path)];
    const answersLate = await Promise.all(late.map(answered));
    // B goes on, into whatever the path is now.
    await open('b-go');
    const answerB = await answered(b);

    const answers = [answerA, answerB, ...answersLate];
    const holders = answers.filter((answer) => 'open' in answer);
    expect(holders).toHaveLength(1);
    const holder = holders[0]!.open as number;
    expect(holders[0]).toEqual({ open: holder, wrote: ACKNOWLEDGED_ROWS });
    for (const answer of answers.filter((each) => 'error' in each))
      expect(answer.error).toMatch(new RegExp(`^Durable state at ${path} is already open by process ${holder} `));

    await killAllHosts();
    expect(await rowsByWriter(path)).toEqual({ [holder]: ACKNOWLEDGED_ROWS });
    // What the refused creators made under private names is gone; the parent holds the state alone.
    expect((await readdir(dir)).filter((name) => !/^[ab]-/.test(name))).toEqual(['state']);
  });
});

describe('a state renamed under its holder', () => {
  class Rows extends DurableObject {
    add(n: number) {
      const sql = (this.ctx as DurableState).storage.sql;
      sql.exec('CREATE TABLE IF NOT EXISTS rows (n INTEGER)');
      sql.exec('INSERT INTO rows VALUES (?)', n);
    }
    count() {
      return (this.ctx as DurableState).storage.sql.exec('SELECT count(*) AS n FROM rows').one().n;
    }
  }
  type RowsStub = { add(n: number): Promise<void>; count(): Promise<number> };

  it('keeps writing where its lock is, never creates the old path again, and another process there is a writer of its own', async () => {
    const path = join(dir, 'state');
    const moved = join(dir, 'moved');
    const host = await openDurableState({ path, exports: { Rows } });
    try {
      host.storage.sql.exec('CREATE TABLE own (n INTEGER)');
      const before = host.facets.get('before', () => ({ class: Rows })) as RowsStub;
      await before.add(1);
      await rename(path, moved);
      // A facet first used after the rename: on main it is created at the old path.
      const after = host.facets.get('after', () => ({ class: Rows })) as RowsStub;
      for (let n = 1; n <= ACKNOWLEDGED_ROWS; n++) await after.add(n);
      host.storage.sql.exec('INSERT INTO own VALUES (1)');
      expect(existsSync(path)).toBe(false);

      // The old name is free: a second process makes a new state there, its own.
      const other = startHost(['hold-write', path]);
      expect(await answered(other)).toEqual({ open: other.child.pid, wrote: ACKNOWLEDGED_ROWS });
      await after.add(ACKNOWLEDGED_ROWS + 1);
      await killAllHosts();
      expect(await readdir(path)).not.toContain('facets');
    } finally {
      await host.close();
    }
    const reopened = await openDurableState({ path: moved, exports: { Rows } });
    try {
      expect(reopened.storage.sql.exec('SELECT n FROM own').toArray()).toEqual([{ n: 1 }]);
      expect(await (reopened.facets.get('before', () => ({ class: Rows })) as RowsStub).count()).toBe(1);
      expect(await (reopened.facets.get('after', () => ({ class: Rows })) as RowsStub).count()).toBe(
        ACKNOWLEDGED_ROWS + 1,
      );
    } finally {
      await reopened.close();
    }
  });
});

describe('an empty directory made at the path while a new state is being created', () => {
  it('whoever locked it is refused, not left writing into a directory the path no longer names', async () => {
    const path = join(dir, 'state');
    // Y finds no path and starts creating the state; it waits before its lock.
    const y = slowHost(path, { started: 'y-started', before: 'y-go' });
    await appears('y-started');
    // Someone makes the directory; X finds it, locks it, and holds back its answer.
    await mkdir(path, { recursive: true, mode: 0o700 });
    const x = slowHost(path, { locked: 'x-locked', after: 'x-go' });
    await appears('x-locked');
    await open('y-go');
    const answerY = await answered(y);
    await open('x-go');
    const answerX = await answered(x);

    const holders = [answerX, answerY].filter((answer) => 'open' in answer);
    expect(holders).toHaveLength(1);
    const holder = holders[0]!.open as number;
    for (const answer of [answerX, answerY].filter((each) => 'error' in each))
      expect(answer.error).toMatch(new RegExp(`^Durable state at ${path} is already open by process ${holder} `));
    await killAllHosts();
    expect(await rowsByWriter(path)).toEqual({ [holder]: ACKNOWLEDGED_ROWS });
  });
});

describe('a path renamed away and made again while an open holds its lock', () => {
  it('the open lets the old directory go and locks the one the path names now', async () => {
    const path = join(dir, 'state');
    await mkdir(path, { mode: 0o700 });
    // The host locks the directory at the path, and holds back its answer.
    const host = slowHost(path, { locked: 'host-locked', after: 'host-go' });
    await appears('host-locked');
    await rename(path, join(dir, 'old'));
    await mkdir(path, { mode: 0o700 });
    await open('host-go');
    expect(await answered(host)).toEqual({ open: host.child.pid, wrote: ACKNOWLEDGED_ROWS });
    // On main the host writes into the new directory without its lock: a second writer got in.
    expect(await runHost(['open', path])).toEqual({
      error: expect.stringContaining(`Durable state at ${path} is already open by process ${host.child.pid}`),
    });
    await killAllHosts();
    expect(await rowsByWriter(path)).toEqual({ [host.child.pid as number]: ACKNOWLEDGED_ROWS });
  });

  it('gives up with STATE_PATH_REPLACED, writing nothing, when the path is swapped under every attempt', async () => {
    const path = join(dir, 'state');
    await mkdir(path, { mode: 0o700 });
    const host = slowHost(path, { replace: 'state' }, 'open');
    expect(await answered(host)).toEqual({
      error: `Durable state at ${path} cannot be opened: it was replaced by another directory while it was being opened, 3 times in a row; whatever renames or recreates it must stop first`,
    });
    expect(await readdir(path)).toEqual([]);
  });
});
