/**
 * What openDurableState refuses, at open and naming the path: a path another holder has (in this
 * process or another one), a database file that is not SQLite, a directory it cannot write, bad
 * options. And that a killed holder leaves nothing stuck.
 */

import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DurableState, openDurableState } from '../../src/durable/index.js';
import { killAllHosts, runHost, startHost } from './support/host-process.js';

/** What `cloudflare:workers` resolves to under the register entry (plain JavaScript, read untyped). */
const { DurableObject } = (await import(new URL('../../src/register/cloudflare-workers.js', import.meta.url).href)) as {
  DurableObject: new (ctx: unknown, env: unknown) => { ctx: unknown; env: unknown };
};

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'durable-open-'));
});

afterEach(async () => {
  await killAllHosts();
  await rm(dir, { recursive: true, force: true });
});

afterAll(killAllHosts);

describe('one holder per path', () => {
  it('refuses a second open in the same process, naming the path and this process, until the first closes', async () => {
    const first = await openDurableState({ path: dir, exports: {} });
    await expect(openDurableState({ path: dir, exports: {} })).rejects.toThrow(
      `Durable state at ${dir} is already open by process ${process.pid} on host ${hostname()}`,
    );
    await first.close();
    const again = await openDurableState({ path: dir, exports: {} });
    await again.close();
  });

  it('refuses an open while another process holds the path, both ways', async () => {
    const holder = startHost(['hold', dir]);
    const { open: holderPid } = await holder.line((line) => 'open' in line);
    await expect(openDurableState({ path: dir, exports: {} })).rejects.toThrow(
      `Durable state at ${dir} is already open by process ${holderPid} on host ${hostname()}`,
    );

    holder.child.kill('SIGKILL');
    await holder.exited;
    // The kernel dropped the killed holder's lock: nothing to clean up by hand.
    const ours = await openDurableState({ path: dir, exports: {} });
    try {
      expect(await runHost(['open', dir])).toEqual({
        error: expect.stringContaining(`Durable state at ${dir} is already open by process ${process.pid}`),
      });
    } finally {
      await ours.close();
    }
    expect(await runHost(['open', dir])).toEqual({ open: expect.any(Number) });
  });

  it('keeps what a SIGKILLed holder wrote and opens its database again', async () => {
    const first = await openDurableState({ path: dir, exports: {} });
    first.storage.sql.exec('CREATE TABLE kept (x TEXT)');
    await first.close();
    const holder = startHost(['hold', dir]);
    await holder.line((line) => 'open' in line);
    holder.child.kill('SIGKILL');
    await holder.exited;
    const reopened = await openDurableState({ path: dir, exports: {} });
    try {
      expect(reopened.storage.sql.exec("SELECT name FROM sqlite_schema WHERE type = 'table'").toArray()).toEqual([
        { name: 'kept' },
      ]);
    } finally {
      await reopened.close();
    }
  });
});

describe('a path that cannot hold state fails at open, naming it', () => {
  it('a database file that is not SQLite', async () => {
    const file = join(dir, 'state.sqlite');
    await writeFile(file, 'this is not a database, just text long enough to fill a header page '.repeat(100));
    await expect(openDurableState({ path: dir, exports: {} })).rejects.toThrow(
      `Durable state database ${file} cannot be opened`,
    );
    // The failed open let the path go.
    await rm(file);
    const fixed = await openDurableState({ path: dir, exports: {} });
    await fixed.close();
  });

  it("a facet's database that is not SQLite", async () => {
    const facetDir = join(dir, 'facets', 'codemode%3Adefault');
    await mkdir(facetDir, { recursive: true });
    await writeFile(join(facetDir, 'state.sqlite'), 'garbage '.repeat(1000));
    await expect(openDurableState({ path: dir, exports: {} })).rejects.toThrow(
      `Durable state database ${join(facetDir, 'state.sqlite')} cannot be opened`,
    );
  });

  it('a path under a regular file', async () => {
    await writeFile(join(dir, 'file'), '');
    const path = join(dir, 'file', 'state');
    await expect(openDurableState({ path, exports: {} })).rejects.toThrow(
      `Durable state at ${path} cannot be opened: ${join(dir, 'file')} exists and is not a directory`,
    );
  });

  it('a directory this process cannot write', async () => {
    const readOnly = join(dir, 'read-only');
    await mkdir(readOnly);
    await chmod(readOnly, 0o555);
    // root writes through mode bits: the host then sees the directory on a read-only mount.
    const root = process.getuid?.() === 0;
    expect(await runHost(['open', readOnly], root ? { readOnly } : {})).toEqual({
      error: expect.stringContaining(`Durable state at ${readOnly} cannot be opened: ${root ? 'EROFS' : 'EACCES'}`),
    });
  });
});

describe('the lock helper', () => {
  it('fails the open, naming the path and the helper, where `flock` is not on the PATH', async () => {
    expect(await runHost(['open', dir], { env: { PATH: '/nonexistent' } })).toEqual({
      error: `Durable state at ${dir} cannot be opened: the lock helper \`flock\` (util-linux) could not run: spawn flock ENOENT`,
    });
  });
});

describe('options', () => {
  it.each([
    [undefined, 'openDurableState(): options must be an object with path, exports, env, durability, maxStateBytes'],
    [{ exports: {} }, 'openDurableState(): options.path must be a directory path (a non-empty string), got undefined'],
    [
      { path: 'x' },
      'openDurableState(): options.exports must be an object of classes, such as { CodemodeRuntime }, got undefined',
    ],
    [
      { path: 'x', exports: {}, paths: 'y' },
      'openDurableState(): unknown option "paths" (did you mean path?); the options are path, exports, env, durability, maxStateBytes',
    ],
    [
      { path: 'x', exports: {}, maxStateBytes: 1000 },
      'openDurableState(): options.maxStateBytes must be a whole number of bytes, 65536 or more, got 1000',
    ],
    [
      { path: 'x', exports: {}, durability: 'none' },
      `openDurableState(): options.durability must be one of 'power-loss', 'process-crash', got "none"`,
    ],
  ])('%o is refused', async (options, text) => {
    await expect(openDurableState(options as never)).rejects.toThrow(text);
  });
});

describe('durability', () => {
  it.each([
    [undefined, 2],
    ['power-loss', 2],
    ['process-crash', 1],
  ] as const)("%s syncs the host's database and a facet's as SQLite's synchronous = %i", async (durability, level) => {
    /** A facet that reads its own database's setting. */
    class Probe extends DurableObject {
      synchronous() {
        return (this.ctx as DurableState).storage.sql.exec('PRAGMA synchronous').one().synchronous;
      }
    }
    const state = await openDurableState({ path: dir, exports: { Probe }, ...(durability ? { durability } : {}) });
    try {
      expect(state.storage.sql.exec('PRAGMA synchronous').one().synchronous).toBe(level);
      const probe = state.facets.get('probe', () => ({ class: Probe })) as { synchronous(): Promise<number> };
      expect(await probe.synchronous()).toBe(level);
    } finally {
      await state.close();
    }
  });
});

describe('backup', () => {
  /** A facet with a table, to show a backup carries facets' databases too. */
  class Notes extends DurableObject {
    add(text: string) {
      const sql = (this.ctx as DurableState).storage.sql;
      sql.exec('CREATE TABLE IF NOT EXISTS notes (text TEXT)');
      sql.exec('INSERT INTO notes VALUES (?)', text);
    }
    list() {
      return (this.ctx as DurableState).storage.sql.exec('SELECT text FROM notes').toArray();
    }
  }
  type NotesStub = { add(text: string): Promise<void>; list(): Promise<{ text: string }[]> };

  it('copies the whole state, facets included, while it stays open; the copy opens as a state', async () => {
    const state = await openDurableState({ path: dir, exports: { Notes } });
    const copy = join(dir, '..', `${basename(dir)}-copy`);
    try {
      state.storage.sql.exec('CREATE TABLE root (x TEXT)');
      const notes = state.facets.get('notes', () => ({ class: Notes })) as NotesStub;
      await notes.add('before');
      await state.backup(copy);
      await notes.add('after');
      await expect(state.backup(copy)).rejects.toThrow(`backup(): cannot write a copy to ${copy}: it already exists`);
      await expect(state.backup(join(dir, 'inside'))).rejects.toThrow('it is inside the state directory');
    } finally {
      await state.close();
    }
    const restored = await openDurableState({ path: copy, exports: { Notes } });
    try {
      expect(restored.storage.sql.exec("SELECT name FROM sqlite_schema WHERE type = 'table'").toArray()).toEqual([
        { name: 'root' },
      ]);
      const notes = restored.facets.get('notes', () => ({ class: Notes })) as NotesStub;
      expect(await notes.list()).toEqual([{ text: 'before' }]);
    } finally {
      await restored.close();
      await rm(copy, { recursive: true, force: true });
    }
  });
});

describe('what others may have planted under the path', () => {
  /** A file and a directory outside the state, which nothing the state does may touch. */
  async function outside(): Promise<{ file: string; dir: string; snapshot(): Promise<string[]> }> {
    const root = join(dir, 'outside');
    await mkdir(join(root, 'precious', 'state.sqlite.lock'), { recursive: true });
    await writeFile(join(root, 'precious', 'state.sqlite.lock', 'keep'), 'kept');
    await writeFile(join(root, 'precious.txt'), 'precious contents\n');
    const snapshot = async () =>
      (await readdir(root, { recursive: true })).sort().concat(await readFile(join(root, 'precious.txt'), 'utf8'));
    return { file: join(root, 'precious.txt'), dir: join(root, 'precious'), snapshot };
  }

  it('refuses a LOCK that is a symbolic link, naming it, and leaves its target as it was', async () => {
    const target = await outside();
    const before = await target.snapshot();
    const path = join(dir, 'state');
    await mkdir(path, { mode: 0o700 });
    await symlink(target.file, join(path, 'LOCK'));
    await expect(openDurableState({ path, exports: {} })).rejects.toMatchObject({
      code: 'STATE_PATH_SYMLINK',
      message: expect.stringContaining(`Durable state at ${path} is refused: ${join(path, 'LOCK')} is a symbolic link`),
    });
    expect(await target.snapshot()).toEqual(before);
  });

  it('refuses a facet directory that is a symbolic link at open, and neither deletes nor writes through it', async () => {
    const target = await outside();
    const before = await target.snapshot();
    const path = join(dir, 'state');
    await mkdir(join(path, 'facets'), { recursive: true, mode: 0o700 });
    await symlink(target.dir, join(path, 'facets', 'codemode%3Adefault'));
    await expect(openDurableState({ path, exports: {} })).rejects.toMatchObject({
      code: 'STATE_PATH_SYMLINK',
      message: expect.stringContaining(`${join(path, 'facets', 'codemode%3Adefault')} is a symbolic link`),
    });
    expect(await target.snapshot()).toEqual(before);
  });

  it('refuses a database file that is a symbolic link', async () => {
    const target = await outside();
    const before = await target.snapshot();
    await symlink(target.file, join(dir, 'state.sqlite-wal'));
    await expect(openDurableState({ path: dir, exports: {} })).rejects.toMatchObject({ code: 'STATE_PATH_SYMLINK' });
    expect(await target.snapshot()).toEqual(before);
  });

  it('refuses a path that is itself a symbolic link, saying to pass what it points to', async () => {
    const real = join(dir, 'real');
    await mkdir(real, { mode: 0o700 });
    await symlink(real, join(dir, 'link'));
    await expect(openDurableState({ path: join(dir, 'link'), exports: {} })).rejects.toMatchObject({
      code: 'STATE_PATH_SYMLINK',
      message: expect.stringContaining('it is a symbolic link'),
    });
    expect(await readdir(real)).toEqual([]);
  });

  it.each([
    [0o777, 'users other than its owner can write it (owner uid'],
    [0o1777, 'users other than its owner can write it (owner uid'],
    [0o770, 'users other than its owner can write it (owner uid'],
  ])('refuses a directory of mode %o, naming the path, its owner and mode, and what to do', async (mode, reason) => {
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(shared, mode);
    const error = await openDurableState({ path: shared, exports: {} }).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    expect(error?.code).toBe('STATE_PATH_UNSAFE');
    expect(error?.message).toContain(`Durable state at ${shared} is refused: ${reason}`);
    expect(error?.message).toContain(`mode 0${mode.toString(8)}`);
    expect(error?.message).toContain(`\`chmod go-w ${shared}\``);
    expect(await readdir(shared)).toEqual([]);
  });

  it.runIf(process.getuid?.() === 0)('refuses a directory another user owns', async () => {
    const theirs = join(dir, 'theirs');
    await mkdir(theirs, { mode: 0o700 });
    await chown(theirs, 65534, 65534);
    await expect(openDurableState({ path: theirs, exports: {} })).rejects.toMatchObject({
      code: 'STATE_PATH_UNSAFE',
      message: expect.stringContaining(
        `it is owned by uid 65534, not by this process's uid 0 (owner uid 65534, mode 0700)`,
      ),
    });
  });

  it('creates a fresh directory, and its facets, with mode 0700', async () => {
    class Facet extends DurableObject {
      touch() {
        (this.ctx as DurableState).storage.sql.exec('CREATE TABLE IF NOT EXISTS t (x)');
      }
    }
    const path = join(dir, 'a', 'b');
    const state = await openDurableState({ path, exports: { Facet } });
    try {
      await (state.facets.get('f', () => ({ class: Facet })) as { touch(): Promise<void> }).touch();
    } finally {
      await state.close();
    }
    for (const made of [join(dir, 'a'), path, join(path, 'facets'), join(path, 'facets', 'f')])
      expect(((await stat(made)).mode & 0o777).toString(8)).toBe('700');
    expect(((await stat(join(path, 'LOCK'))).mode & 0o777).toString(8)).toBe('600');
  });
});

describe('the lock survives what happens to the files in the directory', () => {
  it('refuses a second holder after LOCK is deleted, and loses no acknowledged write', async () => {
    const first = await openDurableState({ path: dir, exports: {} });
    try {
      first.storage.sql.exec('CREATE TABLE acknowledged (n INTEGER)');
      first.storage.sql.exec('INSERT INTO acknowledged VALUES (1)');
      await rm(join(dir, 'LOCK'));
      expect(await runHost(['open', dir])).toEqual({
        error: expect.stringContaining(`Durable state at ${dir} is already open by another process`),
      });
      await expect(openDurableState({ path: dir, exports: {} })).rejects.toMatchObject({ code: 'STATE_ALREADY_OPEN' });
      first.storage.sql.exec('INSERT INTO acknowledged VALUES (2)');
    } finally {
      await first.close();
    }
    const reopened = await openDurableState({ path: dir, exports: {} });
    try {
      expect(reopened.storage.sql.exec('SELECT n FROM acknowledged ORDER BY n').toArray()).toEqual([
        { n: 1 },
        { n: 2 },
      ]);
    } finally {
      await reopened.close();
    }
  });

  it("keeps the SQLite binding's lock directory while it holds the path", async () => {
    const first = await openDurableState({ path: dir, exports: {} });
    try {
      first.storage.sql.exec('CREATE TABLE t (x)');
      await expect(openDurableState({ path: dir, exports: {} })).rejects.toMatchObject({ code: 'STATE_ALREADY_OPEN' });
      expect((await stat(join(dir, 'state.sqlite.lock'))).isDirectory()).toBe(true);
      first.storage.sql.exec('INSERT INTO t VALUES (1)');
    } finally {
      await first.close();
    }
  });
});

describe('a failed open leaves nothing it did not find', () => {
  it('a path that is a file says "not a directory"', async () => {
    const file = join(dir, 'file');
    await writeFile(file, 'x');
    await expect(openDurableState({ path: file, exports: {} })).rejects.toMatchObject({
      code: 'STATE_NOT_A_DIRECTORY',
      message: `Durable state at ${file} cannot be opened: it exists and is not a directory. Give the state a directory: an existing one, or a path that does not exist yet.`,
    });
  });

  it('a failed flock leaves no state directory and no LOCK; the parent it made stays, as others may create beside it', async () => {
    const path = join(dir, 'new', 'state');
    expect(await runHost(['open', path], { env: { PATH: '/nonexistent' } })).toEqual({
      error: expect.stringContaining('the lock helper `flock` (util-linux) could not run'),
    });
    expect(await readdir(dir)).toEqual(['new']);
    expect(await readdir(join(dir, 'new'))).toEqual([]);
    const existing = join(dir, 'existing');
    await mkdir(existing, { mode: 0o700 });
    await runHost(['open', existing], { env: { PATH: '/nonexistent' } });
    expect(await readdir(existing)).toEqual([]);
  });
});

describe('a database a newer SQLite wrote', () => {
  it('is refused at open, naming the file and the reason, not at its first write', async () => {
    const first = await openDurableState({ path: dir, exports: {} });
    first.storage.sql.exec('CREATE TABLE t (x)');
    await first.close();
    // What a SQLite with a newer file format leaves: its write and read versions in the header.
    const file = join(dir, 'state.sqlite');
    const bytes = await readFile(file);
    bytes[18] = 3;
    await writeFile(file, bytes);
    await expect(openDurableState({ path: dir, exports: {} })).rejects.toMatchObject({
      code: 'STATE_DATABASE_UNUSABLE',
      message: expect.stringContaining(
        `Durable state database ${file} cannot be opened: it was written by a newer SQLite (file format: write version 3, read version 2`,
      ),
    });
  });
});

/** Inserts rows of 100 KB into a new table `big` until a write is refused (at most 100). */
function fillUntilRefused(sql: DurableState['storage']['sql']): {
  acknowledged: number;
  failure: (Error & { code?: string }) | undefined;
} {
  sql.exec('CREATE TABLE big (n INTEGER, x TEXT)');
  let acknowledged = 0;
  try {
    for (; acknowledged < 100; acknowledged++)
      sql.exec('INSERT INTO big VALUES (?, ?)', acknowledged, 'x'.repeat(100_000));
  } catch (error) {
    return { acknowledged, failure: error as Error & { code?: string } };
  }
  return { acknowledged, failure: undefined };
}

describe('maxStateBytes', () => {
  it('fails the write past it with a text naming the bound, keeps every write before it, and the state stays usable', async () => {
    const state = await openDurableState({ path: dir, exports: {}, maxStateBytes: 1024 * 1024 });
    const sql = state.storage.sql;
    const { acknowledged, failure } = fillUntilRefused(sql);
    try {
      expect(acknowledged).toBeGreaterThan(5);
      expect(failure?.code).toBe('STATE_SIZE_LIMIT');
      expect(failure?.message).toBe(
        `Durable state database ${join(dir, 'state.sqlite')} is full: it may hold 1048576 bytes (openDurableState's maxStateBytes), and this write would take it past that. The write was not stored; what was stored before is intact. Keep fewer executions (upstream's runtime option maxExecutions, or pruneExecutions()), or open the state with a larger maxStateBytes.`,
      );
      expect(sql.exec('SELECT count(*) AS n FROM big').one().n).toBe(acknowledged);
      sql.exec('DELETE FROM big WHERE n < 3');
      sql.exec('INSERT INTO big VALUES (?, ?)', -1, 'small');
    } finally {
      await state.close();
    }
    const reopened = await openDurableState({ path: dir, exports: {} });
    try {
      expect(reopened.storage.sql.exec('PRAGMA integrity_check').one()).toEqual({ integrity_check: 'ok' });
      expect(reopened.storage.sql.exec('SELECT count(*) AS n FROM big').one().n).toBe(acknowledged - 3 + 1);
    } finally {
      await reopened.close();
    }
  });
});

describe.runIf(process.getuid?.() === 0)('a full disk', () => {
  let mounted: string | undefined;
  afterEach(() => {
    if (mounted) execFileSync('umount', ['-l', mounted]);
    mounted = undefined;
  });

  it('says the disk is full, names the file and what to do, and loses no acknowledged write', async () => {
    const small = join(dir, 'small');
    await mkdir(small);
    // A file system of 2 MiB: the state fills it long before maxStateBytes.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', small]);
    mounted = small;
    const path = join(small, 'state');
    const state = await openDurableState({ path, exports: {} });
    const sql = state.storage.sql;
    const { acknowledged, failure } = fillUntilRefused(sql);
    try {
      expect(failure?.code).toBe('STATE_DISK_FULL');
      expect(failure?.message).toMatch(
        new RegExp(
          `^Durable state database ${path}/state\\.sqlite(-wal)? could not be written: the disk is full \\(ENOSPC\\)\\. This write was not stored`,
        ),
      );
      expect(failure?.message).toContain('Free space on the file system that holds it');
    } finally {
      await state.close();
    }
    const reopened = await openDurableState({ path, exports: {} });
    try {
      expect(reopened.storage.sql.exec('SELECT count(*) AS n FROM big').one().n).toBe(acknowledged);
    } finally {
      await reopened.close();
    }
  });
});
