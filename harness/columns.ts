/**
 * Every column a case runs on, in report order: ours in-process, ours over a daemon, ours under
 * a Worker host (runtime flows only: upstream's runtime in a Durable Object whose executor is a
 * daemon's), then the
 * reference releases oldest to newest. A reference column is a wrangler configuration in
 * reference/ whose alias points `@cloudflare/codemode` at one installed release (`latest` has no
 * alias: whatever npm installed). What a column runs on is read from what is installed, without
 * starting anything; a reference column's release decides which side of each boundary it is on.
 * Node-only.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SANDBOX_COMPATIBILITY_DATE, SANDBOX_COMPATIBILITY_FLAGS } from '../src/isolate/index.js';
import { messageOf } from '../src/protocol/index.js';
import { RELEASE_CACHE, type ResolvedRelease, type ResolvedWorkerd } from './reference/releases.js';
import type { ColumnVersions, MatrixColumn } from './report/model.js';
import { texts } from './texts.js';

/** The reference columns, oldest first: one per distinct executor of the peer range. */
export const REFERENCE_COLUMNS = ['0.2.2', '0.3.8', '0.4.1', '0.4.4', 'latest'] as const;
/**
 * `ours-workerd-newest`: ours over a daemon whose workerd is the npm registry's newest release
 * (reference/releases.ts's `resolveWorkerdRelease`), resolved when the run starts, so a workerd
 * release is seen before the pin moves to it.
 */
export const WORKERD_NEWEST = 'ours-workerd-newest';
/**
 * Reference columns whose release is resolved when the run starts, outside the lockfile
 * (reference/releases.ts): `compare`, an older release named with `--compare`, and `newest`, the
 * registry's newest. They run like `latest`, from a configuration written beside the installed
 * release.
 */
export const RELEASE_COLUMNS = ['compare', 'newest'] as const;
export type ReleaseColumnId = (typeof RELEASE_COLUMNS)[number];
/** The columns resolved from the registry when `npm run matrix` starts: `npm run case` runs none of them. */
export const RESOLVED_COLUMNS = [...RELEASE_COLUMNS, WORKERD_NEWEST] as const;
export const COLUMN_IDS = [
  'ours',
  'ours-remote',
  'ours-worker',
  WORKERD_NEWEST,
  ...REFERENCE_COLUMNS,
  ...RELEASE_COLUMNS,
] as const;
export type ColumnId = (typeof COLUMN_IDS)[number];
/** What `npm run matrix` runs with no `--columns`: `compare` only runs when `--compare` names a release. */
export const DEFAULT_COLUMNS: readonly ColumnId[] = COLUMN_IDS.filter((id) => id !== 'compare');

/** The release each resolved column runs, or why it has none; set once the registry answered. */
const resolved = new Map<ReleaseColumnId, ResolvedRelease | { failure: string }>();
/** The workerd `ours-workerd-newest` runs, or why it has none. */
let workerd: ResolvedWorkerd | { failure: string } | undefined;

function isResolvedColumn(id: string): id is ReleaseColumnId {
  return id === 'compare' || id === 'newest';
}

/** Gives `ours-workerd-newest` its workerd (or why it has none). */
export function useWorkerd(release: ResolvedWorkerd | { failure: string }): void {
  workerd = release;
}

export function resolvedWorkerd(): ResolvedWorkerd | undefined {
  return workerd && !('failure' in workerd) ? workerd : undefined;
}

/**
 * Gives a resolved column its release (or why it has none) and writes its wrangler configuration:
 * `latest`'s, with `@cloudflare/codemode` aliased onto the installed directory.
 */
export function useRelease(id: ReleaseColumnId, release: ResolvedRelease | { failure: string }): void {
  resolved.set(id, release);
  if ('failure' in release) return;
  // A release with the durable runtime (0.4.0 on) hosts runtime flows, as latest's configuration does; one without runs the executor alone, as 0.3.8's does.
  const template = hasRuntime(release.dir) ? 'wrangler.latest.json' : 'wrangler.0.3.8.json';
  const base = readJson(join(ROOT, 'harness', 'reference', template));
  delete base.$schema;
  const config = {
    ...base,
    name: `codemode-reference-${id}`,
    main: join(ROOT, 'harness', 'reference', String(base.main)),
    // wrangler resolves an alias as a file: the package's entry, as its exports map gives it.
    alias: { [CODEMODE]: packageEntry(release.dir) },
  };
  mkdirSync(RELEASE_CACHE, { recursive: true });
  writeFileSync(resolvedConfig(id), `${JSON.stringify(config, null, 2)}\n`);
}

export function resolvedRelease(id: ReleaseColumnId): ResolvedRelease | undefined {
  const release = resolved.get(id);
  return release && !('failure' in release) ? release : undefined;
}

/** Whether the release exports the durable runtime (`createCodemodeRuntime`), read from its declarations. */
function hasRuntime(dir: string): boolean {
  const declarations = join(dir, 'dist', 'index.d.ts');
  return existsSync(declarations) && /\bcreateCodemodeRuntime\b/.test(readFileSync(declarations, 'utf8'));
}

/** The ES module entry of an installed package: `exports["."]`'s import (or default), else `main`. */
function packageEntry(dir: string): string {
  const manifest = readJson(join(dir, 'package.json'));
  const root = (manifest.exports as Record<string, unknown> | undefined)?.['.'];
  const entry =
    typeof root === 'string'
      ? root
      : ((root as Record<string, unknown> | undefined)?.import ??
        (root as Record<string, unknown> | undefined)?.default);
  return join(dir, typeof entry === 'string' ? entry : String(manifest.main ?? 'index.js'));
}

const resolvedConfig = (id: ReleaseColumnId) => join(RELEASE_CACHE, `wrangler.${id}.json`);

const ROOT = join(import.meta.dirname, '..');
export const WRANGLER_BIN = join(ROOT, 'node_modules', '.bin', 'wrangler');
const CODEMODE = '@cloudflare/codemode';

export function isColumnId(id: string): id is ColumnId {
  return (COLUMN_IDS as readonly string[]).includes(id);
}

/** The column's wrangler configuration; an unknown name is refused, with the known ones. */
export function referenceConfig(name: string): string {
  if (isResolvedColumn(name)) {
    if (!resolvedRelease(name)) throw new Error(texts.releases.notResolved(name));
    return resolvedConfig(name);
  }
  if (name !== 'ours-worker' && !(REFERENCE_COLUMNS as readonly string[]).includes(name))
    throw new Error(texts.reference.unknownColumn(name, REFERENCE_COLUMNS));
  return join(ROOT, 'harness', 'reference', `wrangler.${name}.json`);
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

/** Found through the node_modules lookup paths, because most exports maps do not expose package.json. */
function installedPackage(name: string, from = ROOT): { version: string; dir: string } {
  for (const base of createRequire(join(from, 'package.json')).resolve.paths(name) ?? []) {
    const manifest = join(base, name, 'package.json');
    if (existsSync(manifest)) return { version: String(readJson(manifest).version), dir: dirname(manifest) };
  }
  throw new Error(texts.reference.notInstalled(name, from));
}

/** The compatibility date and flags as the release's executor source hands them to the loader. */
function sandboxCompatibility(codemodeDir: string): { date: string; flags: string[] } {
  const source = readFileSync(join(codemodeDir, 'dist', 'index.js'), 'utf8');
  const date = /compatibilityDate:\s*"([^"]+)"/.exec(source)?.[1];
  const flags = /compatibilityFlags:\s*\[([^\]]*)\]/.exec(source)?.[1];
  if (date === undefined || flags === undefined)
    throw new Error(texts.reference.noCompatibility(join(codemodeDir, 'dist', 'index.js')));
  return { date, flags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string) };
}

/**
 * What a reference column runs on: its release, wrangler, the workerd wrangler's miniflare runs,
 * the compatibility settings the release gives the code it loads, and the host worker's. A pinned
 * alias that installed another release is an error.
 */
export function referenceVersions(name: string): ColumnVersions {
  const config = readJson(referenceConfig(name));
  const alias = (config.alias as Record<string, string> | undefined)?.[CODEMODE] ?? CODEMODE;
  const release = isResolvedColumn(name) ? resolvedRelease(name) : undefined;
  const codemode = release
    ? { version: String(readJson(join(release.dir, 'package.json')).version), dir: release.dir }
    : installedPackage(alias);
  if (release ? codemode.version !== release.version : name !== 'latest' && codemode.version !== name)
    throw new Error(texts.reference.aliasMismatch(name, alias, codemode.version));
  const wrangler = installedPackage('wrangler');
  const workerd = installedPackage('workerd', installedPackage('miniflare', wrangler.dir).dir);
  const sandbox = sandboxCompatibility(codemode.dir);
  return {
    codemode: codemode.version,
    executor: null,
    workerd: workerd.version,
    wrangler: wrangler.version,
    compatibilityDate: sandbox.date,
    compatibilityFlags: sandbox.flags,
    hostCompatibilityDate: String(config.compatibility_date),
    hostCompatibilityFlags: (config.compatibility_flags as string[] | undefined) ?? [],
  };
}

/**
 * The column as the report describes it: label and versions. A column whose versions cannot be
 * read carries why, as its infra-error, and has no release (so no boundary places it).
 */
export function describeColumn(id: ColumnId): MatrixColumn {
  const none = { codemode: null, executor: null, workerd: null, wrangler: null, compatibilityDate: null };
  if (id === WORKERD_NEWEST) {
    const versions: ColumnVersions = {
      ...none,
      executor: String(readJson(join(ROOT, 'package.json')).version),
      workerd: resolvedWorkerd()?.version ?? null,
      compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
      compatibilityFlags: [...SANDBOX_COMPATIBILITY_FLAGS],
    };
    const failure =
      workerd === undefined ? texts.releases.notResolved(id) : 'failure' in workerd ? workerd.failure : null;
    const label = versions.workerd === null ? id : `${id} (workerd ${versions.workerd})`;
    return { id, label, kind: id, versions, ...(failure === null ? {} : { infraError: failure }) };
  }
  if (id === 'ours' || id === 'ours-remote' || id === 'ours-worker') {
    const versions: ColumnVersions = {
      ...none,
      executor: String(readJson(join(ROOT, 'package.json')).version),
      workerd: installedPackage('workerd').version,
      compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
      compatibilityFlags: [...SANDBOX_COMPATIBILITY_FLAGS],
    };
    // The Worker host runs the newest installed release's runtime under wrangler dev.
    if (id === 'ours-worker')
      Object.assign(versions, {
        codemode: installedPackage(CODEMODE).version,
        wrangler: installedPackage('wrangler').version,
      });
    return { id, label: id, kind: id, versions };
  }
  try {
    const failure = isResolvedColumn(id) ? resolved.get(id) : undefined;
    if (failure && 'failure' in failure) throw new Error(failure.failure);
    const versions = referenceVersions(id);
    const release = isResolvedColumn(id) ? resolvedRelease(id) : undefined;
    return {
      id,
      label: id === versions.codemode ? id : `${id} (${versions.codemode})`,
      kind: 'reference',
      versions,
      ...(release
        ? {
            release: {
              published: release.published,
              peerRange: release.peerRange,
              inPeerRange: release.inPeerRange,
              chosenBy: release.chosenBy,
            },
          }
        : {}),
    };
  } catch (error) {
    return {
      id,
      label: id,
      kind: 'reference',
      versions: { ...none, compatibilityFlags: [] },
      infraError: messageOf(error),
    };
  }
}
