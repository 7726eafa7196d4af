/**
 * Where an installed package is: Node's own lookup paths from the host's directory (no resolver of
 * ours: which file a package's `exports` lead to is esbuild's to say), and its version against the
 * range asked for.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { describeValue } from '../protocol/describe-value.js';
import { formatNotInstalled, formatSpecInvalid, formatVersionMismatch } from './texts.js';

/** A package asked for: its name, and the version range when one was given. */
export interface PackageSpec {
  name: string;
  range: string | undefined;
}

/** npm's rule for a package name, scoped or not, lower case. */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** `zod`, `zod@^3`, `@scope/name@1`: the name up to the last `@` that does not open a scope. */
export function parseSpec(spec: unknown): PackageSpec {
  if (typeof spec !== 'string') throw new TypeError(formatSpecInvalid(describeValue(spec)));
  const at = spec.lastIndexOf('@');
  const [name, range] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, undefined];
  if (!PACKAGE_NAME.test(name) || (range !== undefined && semver.validRange(range) === null))
    throw new TypeError(formatSpecInvalid(JSON.stringify(spec)));
  return { name, range };
}

/** An installed package: its directory and its manifest's version and dependencies. */
export interface InstalledPackage {
  name: string;
  dir: string;
  version: string;
  dependencies: string[];
}

/** The package's directory as Node would find it from `from`, or undefined. */
function findPackage(name: string, from: string): InstalledPackage | undefined {
  const lookup = createRequire(join(resolve(from), 'noop.js')).resolve.paths(name) ?? [];
  for (const modules of lookup) {
    const manifestPath = join(modules, name, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      version?: string;
      dependencies?: Record<string, string>;
    };
    return {
      name,
      dir: join(modules, name),
      version: manifest.version ?? '0.0.0',
      dependencies: Object.keys(manifest.dependencies ?? {}),
    };
  }
  return undefined;
}

/** The installed package a spec names; refused when it is missing or outside the range. */
export function locatePackage(spec: PackageSpec, from: string): InstalledPackage {
  const found = findPackage(spec.name, from);
  if (found === undefined) throw new Error(formatNotInstalled(spec.name, resolve(from)));
  if (spec.range !== undefined && !semver.satisfies(found.version, spec.range, { includePrerelease: true }))
    throw new Error(formatVersionMismatch(spec.name, spec.range, found.version, found.dir));
  return found;
}

/** Every file under a package's directory but its own node_modules, in a stable order. */
function packageFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name === 'node_modules') continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(path);
    }
  };
  walk(dir);
  return files;
}

/**
 * The content hash of a package as the bundler would read it: every file of the package and of
 * the packages it depends on (found as Node finds them from it), with `salt` (the bundler's
 * version and options) first.
 */
export function contentHash(root: InstalledPackage, salt: string): string {
  const hash = createHash('sha256').update(salt);
  const seen = new Set<string>();
  const pending = [root];
  while (pending.length > 0) {
    const pkg = pending.shift()!;
    if (seen.has(pkg.dir)) continue;
    seen.add(pkg.dir);
    hash.update(`\0package ${pkg.name}@${pkg.version}\0`);
    for (const file of packageFiles(pkg.dir)) {
      hash.update(`\0${file.slice(pkg.dir.length)}\0`);
      hash.update(readFileSync(file));
    }
    for (const dependency of pkg.dependencies) {
      const found = findPackage(dependency, pkg.dir);
      // A dependency that is not installed is the bundler's to report, if the bundle reaches it.
      if (found !== undefined) pending.push(found);
    }
  }
  return hash.digest('hex');
}
