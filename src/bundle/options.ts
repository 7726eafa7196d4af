/**
 * The options of `bundlePackages`, one row each (src/protocol/option-schema.ts), checked before
 * anything is read, so a wrong one costs no bundling.
 */
import { describeValue } from '../protocol/describe-value.js';
import { meetsBounds, nearestOption, type OptionRow } from '../protocol/option-schema.js';
import { formatBundleOptionInvalid, formatBundleOptionsNotObject, formatBundleOptionUnknown } from './texts.js';

const MIB = 2 ** 20;

/** What `bundlePackages` takes besides the package names. */
export interface BundleOptions {
  /** The directory whose node_modules the packages are resolved from (default: the current directory). */
  from?: string;
  /** The largest bundle of one package, in bytes of UTF-8 (default 4 MiB). */
  maxBundleBytes?: number;
  /** The largest set, all its bundles together (default 8 MiB). */
  maxSetBytes?: number;
  /** Minify each bundle (default true). */
  minify?: boolean;
  /** A directory that keeps bundles across processes, keyed by content (default: none). */
  cacheDir?: string;
  /** Fetch each package from the npm registry into this directory, instead of resolving the installed one (default: none). */
  registryDir?: string;
  /** The bytes of bundled sets this process keeps in memory for the calls that ask again (default 32 MiB). */
  maxMemoryCacheBytes?: number;
}

export const BUNDLE_ROWS = {
  from: {
    type: 'string',
    defaultText: 'the current directory',
    rule: 'a directory path',
    description:
      "the directory whose `node_modules` the packages are resolved from, as Node's own lookup walks up from it",
  },
  maxBundleBytes: {
    type: 'integer',
    unit: 'bytes',
    bounds: { kind: 'integer', min: 1 },
    default: 4 * MIB,
    rule: 'a positive integer number of bytes',
    description: 'the largest bundle of one package (UTF-8); a larger one is refused, naming the package and its size',
  },
  maxSetBytes: {
    type: 'integer',
    unit: 'bytes',
    bounds: { kind: 'integer', min: 1 },
    // Half the native default maxRequestBytes (16 MiB), which the map and the code share.
    default: 8 * MIB,
    rule: 'a positive integer number of bytes',
    description:
      "the largest set, its bundles together; keep it below the executor's `maxRequestBytes`, which the map and the code share",
  },
  minify: {
    type: 'boolean',
    default: true,
    rule: 'true or false',
    description:
      'minify each bundle; the checks read the bundle before it is minified, so their texts name the source files',
  },
  cacheDir: {
    type: 'string',
    default: null,
    rule: 'a directory path',
    description:
      'a directory that keeps bundles across processes, one file per bundle named by its content hash; none by default',
  },
  registryDir: {
    type: 'string',
    default: null,
    rule: 'a directory path',
    description:
      "fetch each package from the npm registry into this directory (npm checks each tarball's integrity against the registry's and runs no install scripts), instead of resolving the installed one; a range fetched there is not fetched again",
  },
  maxMemoryCacheBytes: {
    type: 'integer',
    unit: 'bytes',
    bounds: { kind: 'integer', min: 0 },
    // Four sets at the largest maxSetBytes; a few hundred of zod's size.
    default: 32 * MIB,
    rule: 'a non-negative integer number of bytes',
    description:
      'the bytes of bundled sets the process keeps in memory, so a set asked for again is the same map at once; least recently asked out, a set larger than it not kept; 0 keeps none (calls that arrive while a set is bundled still share that bundling)',
  },
} as const satisfies Record<keyof BundleOptions, OptionRow>;

const OPTION_NAMES = Object.keys(BUNDLE_ROWS);

/** The options with their defaults. */
export interface ResolvedBundleOptions {
  from: string;
  maxBundleBytes: number;
  maxSetBytes: number;
  minify: boolean;
  cacheDir: string | undefined;
  registryDir: string | undefined;
  maxMemoryCacheBytes: number;
}

/** The options checked, with their defaults; throws a `TypeError` naming what was wrong. */
export function resolveBundleOptions(options: unknown, cwd: string): ResolvedBundleOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(formatBundleOptionsNotObject(describeValue(options)));
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.includes(name))
      throw new TypeError(formatBundleOptionUnknown(name, OPTION_NAMES, nearestOption(name, OPTION_NAMES)));
  }
  const given = options as BundleOptions;
  const invalid = (name: keyof BundleOptions) =>
    new TypeError(formatBundleOptionInvalid(name, BUNDLE_ROWS[name].rule, describeValue(given[name])));
  for (const name of ['from', 'cacheDir', 'registryDir'] as const) {
    const value = given[name];
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw invalid(name);
  }
  for (const name of ['maxBundleBytes', 'maxSetBytes', 'maxMemoryCacheBytes'] as const) {
    const value = given[name];
    if (value !== undefined && !meetsBounds(BUNDLE_ROWS[name].bounds, value)) throw invalid(name);
  }
  if (given.minify !== undefined && typeof given.minify !== 'boolean') throw invalid('minify');
  return {
    from: given.from ?? cwd,
    maxBundleBytes: given.maxBundleBytes ?? BUNDLE_ROWS.maxBundleBytes.default,
    maxSetBytes: given.maxSetBytes ?? BUNDLE_ROWS.maxSetBytes.default,
    minify: given.minify ?? BUNDLE_ROWS.minify.default,
    cacheDir: given.cacheDir,
    registryDir: given.registryDir,
    maxMemoryCacheBytes: given.maxMemoryCacheBytes ?? BUNDLE_ROWS.maxMemoryCacheBytes.default,
  };
}
