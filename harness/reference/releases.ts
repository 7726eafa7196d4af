/**
 * Releases resolved at run time, outside the lockfile: the `newest` column asks the npm registry
 * for the newest published `@cloudflare/codemode` (its dist-tag `latest`, and any stable version
 * newer than the lock's), and `--compare` names an older one. Each is installed from its registry
 * tarball (integrity checked) into `node_modules/.cache/codemode-releases/<version>/`: git ignores
 * it, `npm ci` clears it with the rest of node_modules, and the package there finds its
 * dependencies in the repository's node_modules by the ordinary upward lookup, exactly as the
 * pinned columns' aliases do. `package-lock.json` is never touched. Node-only.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf } from '../../src/protocol/index.js';
import { fetchFailure } from '../fetch-failure.js';
import { texts } from '../texts.js';

const CODEMODE_PACKAGE = '@cloudflare/codemode';
export const DEFAULT_REGISTRY = 'https://registry.npmjs.org';
const ROOT = join(import.meta.dirname, '..', '..');
/**
 * Inside the repository's node_modules, so an installed release finds its dependencies there.
 * `MATRIX_RELEASE_CACHE` moves it (the tests give each run its own); it must stay under node_modules.
 */
export const RELEASE_CACHE =
  process.env.MATRIX_RELEASE_CACHE ?? join(ROOT, 'node_modules', '.cache', 'codemode-releases');
/** A registry that does not answer within this is treated as down: the nightly must not hang on it. */
const REGISTRY_TIMEOUT_MS = 30_000;

/** What the run knows about one release it resolved. */
export interface ResolvedRelease {
  version: string;
  /** The registry's publish time (its `time` field), ISO 8601; null when the registry gives none. */
  published: string | null;
  /** The peer range this package declares for `@cloudflare/codemode`, and whether the release is in it. */
  peerRange: string;
  inPeerRange: boolean;
  /** How it was chosen: the registry's newest, or named on the command line. */
  chosenBy: 'registry' | 'option';
  /** The installed package directory. */
  dir: string;
}

interface Packument {
  'dist-tags'?: Record<string, string>;
  versions?: Record<string, { dist?: { tarball?: string; integrity?: string } }>;
  time?: Record<string, string>;
}

const STABLE = /^(\d+)\.(\d+)\.(\d+)$/;

/** Semver order of two stable versions (releases are sorted by semver, never by the registry's dates). */
export function compareVersions(a: string, b: string): number {
  const [left, right] = [a, b].map((version) => (STABLE.exec(version) ?? []).slice(1).map(Number));
  for (let i = 0; i < 3; i += 1)
    if ((left?.[i] ?? 0) !== (right?.[i] ?? 0)) return (left?.[i] ?? 0) - (right?.[i] ?? 0);
  return 0;
}

/** Whether a stable version meets a range of space-separated comparators (`>=0.2.2 <0.6.0`), as the peer range is written. */
export function inRange(version: string, range: string): boolean {
  return range
    .trim()
    .split(/\s+/)
    .every((comparator) => {
      const match = /^(>=|<=|>|<|=)?(\d+\.\d+\.\d+)$/.exec(comparator);
      if (!match) throw new Error(texts.releases.unreadableRange(range));
      const order = compareVersions(version, match[2]!);
      switch (match[1]) {
        case '>=':
          return order >= 0;
        case '<=':
          return order <= 0;
        case '>':
          return order > 0;
        case '<':
          return order < 0;
        default:
          return order === 0;
      }
    });
}

/** The peer range this package declares, read from its package.json. */
function peerRange(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  return manifest.peerDependencies[CODEMODE_PACKAGE]!;
}

/** The registry's full document for a package (the abbreviated one has no publish times). */
async function fetchPackument(registry: string, name = CODEMODE_PACKAGE): Promise<Packument> {
  const url = `${registry.replace(/\/+$/, '')}/${name.replace('/', '%2f')}`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS),
    });
  } catch (error) {
    throw new Error(texts.releases.registryUnreachable(url, fetchFailure(error)));
  }
  if (!response.ok) throw new Error(texts.releases.registryStatus(url, response.status));
  try {
    return (await response.json()) as Packument;
  } catch (error) {
    throw new Error(texts.releases.registryNotJson(url, messageOf(error)));
  }
}

/**
 * The newest release: the greatest, by semver, of the dist-tag `latest` and every stable version
 * newer than the lock's. Prereleases are not releases, so they are left out.
 */
export function newestVersion(packument: Packument, lockVersion: string, name = CODEMODE_PACKAGE): string {
  const candidates = Object.keys(packument.versions ?? {}).filter(
    (version) => STABLE.test(version) && compareVersions(version, lockVersion) > 0,
  );
  const tagged = packument['dist-tags']?.latest;
  if (tagged !== undefined && STABLE.test(tagged)) candidates.push(tagged);
  if (candidates.length === 0) throw new Error(texts.releases.noLatestTag(name));
  return candidates.sort(compareVersions).at(-1)!;
}

/** Downloads and unpacks one version into the cache, once; a tarball whose integrity differs is refused. */
async function install(
  packument: Packument,
  version: string,
  name = CODEMODE_PACKAGE,
  cache = RELEASE_CACHE,
): Promise<string> {
  const dir = join(cache, version, 'node_modules', name);
  if (existsSync(join(dir, 'package.json'))) return dir;
  const dist = packument.versions?.[version]?.dist;
  if (!dist?.tarball)
    throw new Error(texts.releases.notPublished(name, version, Object.keys(packument.versions ?? {})));
  let bytes: Buffer;
  try {
    const response = await fetch(dist.tarball, { signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    throw new Error(texts.releases.tarballFailed(dist.tarball, messageOf(error)));
  }
  const [algorithm, expected] = (dist.integrity ?? '').split('-', 2);
  if (!algorithm || !expected) throw new Error(texts.releases.noIntegrity(name, version));
  const actual = createHash(algorithm).update(bytes).digest('base64');
  if (actual !== expected) throw new Error(texts.releases.integrityMismatch(name, version, dist.integrity!));
  // Unpacked beside its place and moved in whole, so an interrupted install leaves no half package.
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const tarball = join(staging, 'package.tgz');
  writeFileSync(tarball, bytes);
  execFileSync('tar', ['-xzf', tarball, '-C', staging, '--strip-components=1'], { stdio: 'ignore' });
  rmSync(tarball);
  renameSync(staging, dir);
  return dir;
}

/** The registry's time as ISO 8601 UTC (registries write `+00:00`, with or without milliseconds); null when unreadable. */
function publishedAt(time: string | undefined): string | null {
  const date = time === undefined ? Number.NaN : Date.parse(time);
  return Number.isNaN(date) ? null : new Date(date).toISOString();
}

export interface ResolveOptions {
  registry: string;
  /** The release the lock installed (the `latest` column's). */
  lockVersion: string;
  /** `--newest <version>` or `--compare <version>`: that version, not the registry's newest. */
  pinned?: string;
}

/** Resolves and installs one release; rejects with why (the column then does not run). */
export async function resolveRelease(options: ResolveOptions): Promise<ResolvedRelease> {
  if (options.pinned !== undefined && !STABLE.test(options.pinned))
    throw new Error(texts.releases.notAVersion(options.pinned));
  const packument = await fetchPackument(options.registry);
  const version = options.pinned ?? newestVersion(packument, options.lockVersion);
  const dir = await install(packument, version);
  const range = peerRange();
  return {
    version,
    published: publishedAt(packument.time?.[version]),
    peerRange: range,
    inPeerRange: inRange(version, range),
    chosenBy: options.pinned === undefined ? 'registry' : 'option',
    dir,
  };
}

/**
 * workerd releases resolved at run time, for the `ours-workerd-newest` column: the binary of this
 * platform's package (`@cloudflare/workerd-linux-64`, …) at the registry's newest version,
 * unpacked into `node_modules/.cache/workerd-releases/<version>/` as a codemode release is.
 * workerd's versions (`1.YYYYMMDD.N`) order by semver as by date.
 */
const WORKERD_CACHE = process.env.MATRIX_WORKERD_CACHE ?? join(ROOT, 'node_modules', '.cache', 'workerd-releases');

/** What the run knows about the workerd release it resolved. */
export interface ResolvedWorkerd {
  version: string;
  published: string | null;
  /** The version `package.json` pins (what `ours` runs). */
  pinned: string;
  chosenBy: 'registry' | 'option';
  /** The installed binary. */
  binary: string;
}

export interface ResolveWorkerdOptions {
  registry: string;
  /** This platform's package (workerd-binary.ts's `workerdPlatformPackage`). */
  platformPackage: string;
  /** The version package.json pins. */
  pinned: string;
  /** `--workerd <version>`: that version, not the registry's newest. */
  version?: string;
}

/** Resolves and installs the newest workerd binary for this platform; rejects with why (the column then does not run). */
export async function resolveWorkerdRelease(options: ResolveWorkerdOptions): Promise<ResolvedWorkerd> {
  if (options.version !== undefined && !STABLE.test(options.version))
    throw new Error(texts.releases.notAVersion(options.version));
  const packument = await fetchPackument(options.registry, options.platformPackage);
  const version = options.version ?? newestVersion(packument, options.pinned, options.platformPackage);
  const dir = await install(packument, version, options.platformPackage, WORKERD_CACHE);
  return {
    version,
    published: publishedAt(packument.time?.[version]),
    pinned: options.pinned,
    chosenBy: options.version === undefined ? 'registry' : 'option',
    binary: join(dir, 'bin', 'workerd'),
  };
}
