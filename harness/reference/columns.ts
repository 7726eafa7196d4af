/**
 * The reference columns: one per distinct executor of the peer range (docs/reference-columns.md),
 * each a wrangler configuration that bundles `worker.ts` against that release. Node-only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aliasVersionMismatch, unknownColumn } from './messages.js';

/** The reference columns, oldest first; `latest` is whatever npm installed. */
export const COLUMN_NAMES = ['0.2.2', '0.3.8', '0.4.1', '0.4.4', 'latest'] as const;
export type ColumnName = (typeof COLUMN_NAMES)[number];

export interface ReferenceColumn {
  name: ColumnName;
  /** The installed package the worker's `@cloudflare/codemode` import resolves to. */
  packageName: string;
  /** The release the npm alias must install; `undefined` for `latest`, which is whatever npm brought. */
  pinned: string | undefined;
  /** Absolute path of the column's wrangler configuration. */
  configPath: string;
}

/** What a column runs on, as installed. Exported for the matrix report. */
export interface ColumnVersions {
  column: ColumnName;
  /** The `@cloudflare/codemode` release the column runs. */
  codemode: string;
  wrangler: string;
  /** The workerd package wrangler's miniflare runs. */
  workerd: string;
  /** The host worker's compatibility date and flags (the column's wrangler configuration). */
  hostCompatibilityDate: string;
  hostCompatibilityFlags: string[];
  /** The compatibility date and flags the release itself gives the dynamic worker it loads. */
  sandboxCompatibilityDate: string;
  sandboxCompatibilityFlags: string[];
}

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const requireFromRoot = createRequire(join(ROOT, 'package.json'));

const REFERENCE_COLUMN_CONFIGS: readonly ReferenceColumn[] = [
  { name: '0.2.2', packageName: 'codemode-0-2', pinned: '0.2.2', configPath: join(HERE, 'wrangler.0.2.2.json') },
  { name: '0.3.8', packageName: 'codemode-0-3', pinned: '0.3.8', configPath: join(HERE, 'wrangler.0.3.8.json') },
  { name: '0.4.1', packageName: 'codemode-0-4-1', pinned: '0.4.1', configPath: join(HERE, 'wrangler.0.4.1.json') },
  { name: '0.4.4', packageName: 'codemode-0-4', pinned: '0.4.4', configPath: join(HERE, 'wrangler.0.4.4.json') },
  {
    name: 'latest',
    packageName: '@cloudflare/codemode',
    pinned: undefined,
    configPath: join(HERE, 'wrangler.latest.json'),
  },
];

export const WRANGLER_BIN = join(ROOT, 'node_modules', '.bin', 'wrangler');

export function columnByName(name: string): ReferenceColumn {
  const column = REFERENCE_COLUMN_CONFIGS.find((c) => c.name === name);
  if (!column) throw new Error(unknownColumn(name, COLUMN_NAMES));
  return column;
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** Found through the node_modules lookup paths, because most exports maps do not expose package.json. */
function installedPackage(packageName: string, from = requireFromRoot): { version: string; dir: string } {
  for (const base of from.resolve.paths(packageName) ?? []) {
    const manifest = join(base, packageName, 'package.json');
    if (existsSync(manifest)) return { version: String(readJson(manifest).version), dir: dirname(manifest) };
  }
  throw new Error(`${packageName} is not installed (looked from ${ROOT})`);
}

/** The compatibility date and flags as the release's executor source hands them to the loader. */
function sandboxCompatibility(codemodeDir: string): { date: string; flags: string[] } {
  const source = readFileSync(join(codemodeDir, 'dist', 'index.js'), 'utf8');
  const date = /compatibilityDate:\s*"([^"]+)"/.exec(source)?.[1];
  const flags = /compatibilityFlags:\s*\[([^\]]*)\]/.exec(source)?.[1];
  if (date === undefined || flags === undefined)
    throw new Error(`Could not find the loader's compatibility settings in ${codemodeDir}/dist/index.js`);
  return { date, flags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string) };
}

/** The installed version of a package, resolved from the project root. */
export function installedVersion(packageName: string): string {
  return installedPackage(packageName).version;
}

/** Reads every version the column runs on from what is installed; a pinned alias that drifted is an error. */
export function readColumnVersions(column: ReferenceColumn): ColumnVersions {
  const codemode = installedPackage(column.packageName);
  if (column.pinned !== undefined && codemode.version !== column.pinned) {
    throw new Error(aliasVersionMismatch(column.name, column.packageName, column.pinned, codemode.version));
  }
  const wrangler = installedPackage('wrangler');
  const miniflare = installedPackage('miniflare', createRequire(join(wrangler.dir, 'package.json')));
  const workerd = installedPackage('workerd', createRequire(join(miniflare.dir, 'package.json')));
  const config = readJson(column.configPath);
  const sandbox = sandboxCompatibility(codemode.dir);
  return {
    column: column.name,
    codemode: codemode.version,
    wrangler: wrangler.version,
    workerd: workerd.version,
    hostCompatibilityDate: String(config.compatibility_date),
    hostCompatibilityFlags: (config.compatibility_flags as string[] | undefined) ?? [],
    sandboxCompatibilityDate: sandbox.date,
    sandboxCompatibilityFlags: sandbox.flags,
  };
}
