/**
 * What a confined member's view is built from, made reachable by the member's uid. On a root
 * host, bwrap runs as uid 65534 and resolves every source path itself (`realpath`), so a file
 * under a directory that uid may not search (a package installed under /root, a clone in a
 * mode-700 `mktemp -d` folder) cannot be bound from where it is. A descriptor the host opened does
 * not help: bwrap resolves `/proc/self/fd/N` back to that same path (measured, bwrap 0.8).
 *
 * The host, which can read the file, links it (or copies it, across file systems) into a
 * directory of its own that the member's uid may search, and the view binds it from there, at
 * the path it has in the view. Once per process; the directory goes at the host's exit, or, after
 * a SIGKILL, when the next host stages its files. Member directories likewise go under a
 * temporary directory that uid may search.
 */
import { chmodSync, copyFileSync, linkSync, mkdtempSync, realpathSync, rmSync, type Stats, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { MemberOwner } from './member-owner.js';
import { makeProcessDirectory } from './process-directories.js';
import { confinementText } from './texts.js';

/** Permission bits, as in the mode's "other" triple. */
const READ = 0o4;
const SEARCH = 0o1;

/** Whether `who` (no supplementary groups) has `bits` on a file of this stat. */
function allows(stat: Stats, who: MemberOwner, bits: number): boolean {
  if (stat.uid === who.uid) return (stat.mode & (bits << 6)) !== 0;
  if (stat.gid === who.gid) return (stat.mode & (bits << 3)) !== 0;
  return (stat.mode & bits) !== 0;
}

/** Whether `who` may search every directory from `/` down to `directory`, that one included. */
function searchableBy(directory: string, who: MemberOwner): boolean {
  try {
    for (let at = realpathSync(directory); ; at = dirname(at)) {
      if (!allows(statSync(at), who, SEARCH)) return false;
      if (at === '/') return true;
    }
  } catch {
    return false;
  }
}

/** Whether `who` may open `file` for reading, by its real path. */
function readableBy(file: string, who: MemberOwner): boolean {
  try {
    const real = realpathSync(file);
    return searchableBy(dirname(real), who) && allows(statSync(real), who, READ);
  } catch {
    return false;
  }
}

/** Candidate directories for what the host makes for members, the host's own first. */
function temporaryDirectories(): string[] {
  return [...new Set([tmpdir(), '/tmp', '/dev/shm'])];
}

const bases = new Map<string, string | undefined>();

/** A temporary directory the member's uid may search: where member directories and staged files go. */
export function memberBase(who: MemberOwner | undefined): string {
  if (who === undefined) return tmpdir();
  const key = `${who.uid}:${who.gid}`;
  if (!bases.has(key))
    bases.set(
      key,
      temporaryDirectories().find((directory) => searchableBy(directory, who)),
    );
  const base = bases.get(key);
  if (base === undefined) throw new Error(confinementText.noSearchableTemporary(temporaryDirectories(), who.uid));
  return base;
}

let staging: string | undefined;

/** A staging directory's name: it names the process that made it. */
const STAGING_PREFIX = 'codemode-view-';

/** The host's directory of staged files, made once; removed at exit. */
function stagingDirectory(who: MemberOwner): string {
  if (staging !== undefined) return staging;
  const base = memberBase(who);
  const made = makeProcessDirectory(base, STAGING_PREFIX);
  // Owned by the host, searchable by all, writable by the host alone.
  chmodSync(made, 0o755);
  process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  staging = made;
  return made;
}

/**
 * For each file the member's uid cannot read where it is, the path of a linked or copied
 * equivalent it can, keyed by the file's real path. Files it can read are left out.
 */
export function stageUnreachable(files: readonly string[], who: MemberOwner | undefined): Record<string, string> {
  const staged: Record<string, string> = {};
  if (who === undefined) return staged;
  for (const file of files) {
    const real = realpathSync(file);
    if (real in staged || readableBy(real, who)) continue;
    const directory = mkdtempSync(join(stagingDirectory(who), `${basename(real)}-`));
    chmodSync(directory, 0o755);
    const target = join(directory, basename(real));
    try {
      linkSync(real, target);
    } catch {
      // Another file system, or linking refused: a copy, with the file's own mode.
      copyFileSync(real, target);
      chmodSync(target, statSync(real).mode & 0o7777);
    }
    if (!readableBy(target, who)) throw new Error(confinementText.stagedUnreadable(real, target, who.uid));
    staged[real] = target;
  }
  return staged;
}
