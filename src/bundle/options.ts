/**
 * The options of `bundlePackages`: one valibot schema (src/protocol/parse-options.ts), whose rows
 * are --help's and the docs', parsed before anything is read, so a wrong one costs no bundling.
 */
import * as v from 'valibot';
import { describeValue } from '../protocol/describe-value.js';
import { type OptionTexts, option, optionsSchema, parseOptions, rowsOf } from '../protocol/parse-options.js';
import { formatBundleOptionInvalid, formatBundleOptionsNotObject, formatBundleOptionUnknown } from './texts.js';

const MIB = 2 ** 20;

const DIRECTORY = v.pipe(v.string(), v.minLength(1));

const BUNDLE_SCHEMA = optionsSchema(
  {
    /** The directory whose node_modules the packages are resolved from (default: the current directory). */
    from: option(DIRECTORY, {
      type: 'string',
      defaultText: 'the current directory',
      rule: 'a directory path',
      description:
        "the directory whose `node_modules` the packages are resolved from, as Node's own lookup walks up from it",
    }),
    /** The largest bundle of one package, in bytes of UTF-8 (default 4 MiB). */
    maxBundleBytes: option(v.number(), {
      type: 'integer',
      unit: 'bytes',
      bounds: { kind: 'integer', min: 1 },
      default: 4 * MIB,
      rule: 'a positive integer number of bytes',
      description:
        'the largest bundle of one package (UTF-8); a larger one is refused, naming the package and its size',
    }),
    /** The largest set, all its bundles together (default 8 MiB). */
    maxSetBytes: option(v.number(), {
      type: 'integer',
      unit: 'bytes',
      bounds: { kind: 'integer', min: 1 },
      // Half the native default maxRequestBytes (16 MiB), which the map and the code share.
      default: 8 * MIB,
      rule: 'a positive integer number of bytes',
      description:
        "the largest set, its bundles together; keep it below the executor's `maxRequestBytes`, which the map and the code share",
    }),
    /** Minify each bundle (default true). */
    minify: option(v.boolean(), {
      type: 'boolean',
      default: true,
      rule: 'true or false',
      description:
        'minify each bundle; the checks read the bundle before it is minified, so their texts name the source files',
    }),
    /** A directory that keeps bundles across processes, keyed by content (default: none). */
    cacheDir: option(DIRECTORY, {
      type: 'string',
      default: null,
      rule: 'a directory path',
      description:
        'a directory that keeps bundles across processes, one file per bundle named by its content hash; none by default',
    }),
    /** Fetch each package from the npm registry into this directory, instead of resolving the installed one (default: none). */
    registryDir: option(DIRECTORY, {
      type: 'string',
      default: null,
      rule: 'a directory path',
      description:
        "fetch each package from the npm registry into this directory (npm checks each tarball's integrity against the registry's and runs no install scripts), instead of resolving the installed one; a range fetched there is not fetched again",
    }),
    /** The bytes of bundled sets this process keeps in memory for the calls that ask again (default 32 MiB). */
    maxMemoryCacheBytes: option(v.number(), {
      type: 'integer',
      unit: 'bytes',
      bounds: { kind: 'integer', min: 0 },
      // Four sets at the largest maxSetBytes; a few hundred of zod's size.
      default: 32 * MIB,
      rule: 'a non-negative integer number of bytes',
      description:
        'the bytes of bundled sets the process keeps in memory, so a set asked for again is the same map at once; least recently asked out, a set larger than it not kept; 0 keeps none (calls that arrive while a set is bundled still share that bundling)',
    }),
  },
  { arrays: false },
);

/** What `bundlePackages` takes besides the package names. */
export type BundleOptions = v.InferInput<typeof BUNDLE_SCHEMA>;

export const BUNDLE_ROWS = rowsOf(BUNDLE_SCHEMA);

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

const BUNDLE_TEXTS: OptionTexts = {
  notObject: (value) => formatBundleOptionsNotObject(describeValue(value)),
  unknown: formatBundleOptionUnknown,
  invalid: (name, rule, value) => formatBundleOptionInvalid(name, rule, describeValue(value)),
};

/** The options parsed by their schema, with their defaults; throws a `TypeError` naming what was wrong. */
export function resolveBundleOptions(options: unknown, cwd: string): ResolvedBundleOptions {
  const given = parseOptions(
    BUNDLE_SCHEMA,
    options === undefined ? {} : options,
    BUNDLE_TEXTS,
    (text) => new TypeError(text),
  );
  return { ...given, from: given.from ?? cwd, cacheDir: given.cacheDir, registryDir: given.registryDir };
}
