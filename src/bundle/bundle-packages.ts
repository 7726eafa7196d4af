/**
 * `bundlePackages(['zod', 'date-fns@^4'])`: a module map the sandbox imports the packages from,
 * `await import('zod')`, on our executor and as upstream's `DynamicWorkerExecutor({ modules })`.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeValue } from '../protocol/describe-value.js';
import { bundleOne, bundlerSettings } from './bundle-one.js';
import { contentHash, locatePackage, parseSpec } from './locate.js';
import { type BundleOptions, type ResolvedBundleOptions, resolveBundleOptions } from './options.js';
import { fetchFromRegistry } from './registry.js';
import { formatBundleTooLarge, formatSetTooLarge, formatSpecRepeated, formatSpecsInvalid } from './texts.js';

/**
 * One package's module: a bare name whose value says its kind, `{ js: source }`. A name given
 * with a string value must end in `.js` on every release, so `import('zod')` needs this form; every
 * pinned release hands its modules to the Worker Loader as they are, so it works there too.
 */
export interface PackageModule {
  readonly js: string;
}

/** Package name → its module. */
export type PackageModuleMap = Readonly<Record<string, PackageModule>>;

/** A set in the memo: its bundling, and its size once bundled (undefined while it is bundled). */
interface Remembered {
  readonly bundling: Promise<PackageModuleMap>;
  bytes: number | undefined;
}

/**
 * The sets this process bundled (or is bundling), by what was asked: a warm call is one lookup,
 * and concurrent calls for one set share one bundling. In the order last asked, so the least
 * recently asked goes first when the bundled sets pass maxMemoryCacheBytes. A failed set is
 * forgotten, so a retry bundles.
 */
const memo = new Map<string, Remembered>();
/** The bytes of the bundled sets in the memo. */
let memoBytes = 0;

/** Drops bundled sets, least recently asked first, until those kept fit `cap`; a set being bundled stays. */
function trimMemo(cap: number): void {
  for (const [key, entry] of memo) {
    if (memoBytes <= cap) return;
    if (entry.bytes === undefined) continue;
    memo.delete(key);
    memoBytes -= entry.bytes;
  }
}

function forget(key: string, entry: Remembered): void {
  if (memo.get(key) !== entry) return;
  memo.delete(key);
  memoBytes -= entry.bytes ?? 0;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** A bundle from the on-disk cache, or undefined when it has none (or an unreadable one). */
function readCached(cacheDir: string, key: string): string | undefined {
  try {
    const cached = JSON.parse(readFileSync(join(cacheDir, `${key}.json`), 'utf8')) as { js?: unknown };
    return typeof cached.js === 'string' ? cached.js : undefined;
  } catch {
    return undefined;
  }
}

/** Written aside then renamed, so a reader never sees half a bundle. */
function writeCached(cacheDir: string, key: string, js: string): void {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `${key}.json`);
  const aside = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(aside, JSON.stringify({ js }));
  renameSync(aside, path);
}

async function bundleSet(names: readonly string[], specs: readonly unknown[], options: ResolvedBundleOptions) {
  const settings = bundlerSettings(options.minify);
  const map: Record<string, PackageModule> = {};
  let total = 0;
  for (const spec of specs.map(parseSpec)) {
    const from = options.registryDir === undefined ? options.from : await fetchFromRegistry(options.registryDir, spec);
    const pkg = locatePackage(spec, from);
    const key = options.cacheDir === undefined ? undefined : contentHash(pkg, settings);
    let js = key === undefined ? undefined : readCached(options.cacheDir!, key);
    if (js === undefined) {
      js = await bundleOne(pkg, from, options.minify);
      if (key !== undefined) writeCached(options.cacheDir!, key, js);
    }
    const size = utf8Bytes(js);
    if (size > options.maxBundleBytes)
      throw new RangeError(formatBundleTooLarge(spec.name, size, options.maxBundleBytes));
    total += size;
    map[spec.name] = Object.freeze({ js });
  }
  if (total > options.maxSetBytes) throw new RangeError(formatSetTooLarge(names, total, options.maxSetBytes));
  return { map: Object.freeze(map) as PackageModuleMap, bytes: total };
}

/**
 * Bundles installed packages for the sandbox. Each package becomes one ES module named by the
 * package, `{ js: source }`, which a program imports by that name. Resolved from `options.from`'s
 * node_modules (default: the current directory) with the export conditions worker, browser and
 * import. Rejects with a `BundleRefusal` naming the package, the import chain and the reason when
 * the sandbox could not run it. The returned map is frozen, and the same object for the same set.
 */
export function bundlePackages(specs: readonly string[], options?: BundleOptions): Promise<PackageModuleMap> {
  let resolved: ResolvedBundleOptions;
  let names: string[];
  try {
    if (!Array.isArray(specs)) throw new TypeError(formatSpecsInvalid(describeValue(specs)));
    resolved = resolveBundleOptions(options, process.cwd());
    names = specs.map((spec) => parseSpec(spec).name);
    const repeated = names.find((name, index) => names.indexOf(name) !== index);
    if (repeated !== undefined) throw new TypeError(formatSpecRepeated(repeated));
  } catch (error) {
    return Promise.reject(error);
  }
  // The memo's own bound shapes no output, so it is no part of what the set is.
  const { maxMemoryCacheBytes, ...shaping } = resolved;
  const setKey = JSON.stringify([specs, shaping]);
  const known = memo.get(setKey);
  if (known !== undefined) {
    // Asked again: the most recent now.
    memo.delete(setKey);
    memo.set(setKey, known);
    trimMemo(maxMemoryCacheBytes);
    return known.bundling;
  }
  const bundled = bundleSet(names, specs, resolved);
  const entry: Remembered = { bundling: bundled.then(({ map }) => map), bytes: undefined };
  memo.set(setKey, entry);
  bundled.then(
    ({ bytes }) => {
      if (memo.get(setKey) !== entry) return;
      entry.bytes = bytes;
      memoBytes += bytes;
      trimMemo(maxMemoryCacheBytes);
    },
    () => forget(setKey, entry),
  );
  return entry.bundling;
}
