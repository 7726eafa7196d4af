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
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SANDBOX_COMPATIBILITY_DATE, SANDBOX_COMPATIBILITY_FLAGS } from '../src/isolate/index.js';
import { messageOf } from '../src/protocol/index.js';
import type { ColumnVersions, MatrixColumn } from './report/model.js';
import { texts } from './texts.js';

/** The reference columns, oldest first: one per distinct executor of the peer range. */
export const REFERENCE_COLUMNS = ['0.2.2', '0.3.8', '0.4.1', '0.4.4', 'latest'] as const;
export const COLUMN_IDS = ['ours', 'ours-remote', 'ours-worker', ...REFERENCE_COLUMNS] as const;
export type ColumnId = (typeof COLUMN_IDS)[number];

const ROOT = join(import.meta.dirname, '..');
export const WRANGLER_BIN = join(ROOT, 'node_modules', '.bin', 'wrangler');
const CODEMODE = '@cloudflare/codemode';

export function isColumnId(id: string): id is ColumnId {
  return (COLUMN_IDS as readonly string[]).includes(id);
}

/** The column's wrangler configuration; an unknown name is refused, with the known ones. */
export function referenceConfig(name: string): string {
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
  const codemode = installedPackage(alias);
  if (name !== 'latest' && codemode.version !== name)
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
    const versions = referenceVersions(id);
    return { id, label: id === versions.codemode ? id : `${id} (${versions.codemode})`, kind: 'reference', versions };
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
