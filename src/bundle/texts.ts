/** Every text `bundlePackages` and `codemode-executor bundle` compose, and nothing else. */
import { formatDidYouMean } from '../protocol/did-you-mean.js';

/** What the sandbox lacks, said once so every refusal that rests on it reads the same. */
const SANDBOX_HAS_NO = 'the sandbox has no Node built-ins, no filesystem and no network except through the host';

/** The head every refusal of a package starts with. */
function refusalHead(name: string): string {
  return `Cannot bundle "${name}" for the sandbox`;
}

/** An import chain, the package first: `dotenv -> dotenv/lib/main.js -> fs`. */
function formatImportChain(chain: readonly string[]): string {
  return chain.join(' -> ');
}

export function formatBuiltinRefused(name: string, builtin: string, chain: readonly string[]): string {
  return `${refusalHead(name)}: it imports the Node built-in "${builtin}" (${formatImportChain(chain)}), and ${SANDBOX_HAS_NO}`;
}

export function formatNativeAddonRefused(name: string, addon: string, chain: readonly string[]): string {
  return `${refusalHead(name)}: it loads the native addon "${addon}" (${formatImportChain(chain)}), and the sandbox runs JavaScript only`;
}

export function formatDynamicRequireRefused(name: string, site: string, chain: readonly string[]): string {
  return `${refusalHead(name)}: ${site} calls require() with a computed path (${formatImportChain(chain)}), which no bundle can resolve ahead of the run`;
}

export function formatEvalRefused(name: string, form: string, site: string, chain: readonly string[]): string {
  return `${refusalHead(name)}: ${site} calls ${form} when it loads, outside a try block or a fallback (${formatImportChain(chain)}), and the sandbox refuses code generation from strings (eval, new Function)`;
}

export function formatBundlerFailed(name: string, detail: string): string {
  return `${refusalHead(name)}: the bundler failed: ${detail}`;
}

export function formatNotInstalled(name: string, from: string): string {
  return `Cannot bundle "${name}": it is not installed where bundlePackages looks (option from, here ${from}); install it there (npm install ${name}) or pass from: the directory of the project that has it`;
}

export function formatVersionMismatch(name: string, range: string, installed: string, at: string): string {
  return `Cannot bundle "${name}@${range}": the installed version is ${installed} (${at}), which is not in ${range}; install a version in the range, or ask for the one installed`;
}

export function formatSpecInvalid(got: string): string {
  return `bundlePackages takes package names, each optionally with a version range ("zod", "zod@^3", "@scope/name@1"); got ${got}`;
}

export function formatSpecsInvalid(got: string): string {
  return `bundlePackages takes an array of package names ("zod", "zod@^3"); got ${got}`;
}

export function formatSpecRepeated(name: string): string {
  return `bundlePackages was given "${name}" twice: a set holds each package once, under its name`;
}

export function formatBundleTooLarge(name: string, size: number, cap: number): string {
  return `The bundle of "${name}" is ${size} bytes, above the cap of ${cap} bytes (bundlePackages option maxBundleBytes): raise the cap, or import a smaller package`;
}

export function formatSetTooLarge(names: readonly string[], size: number, cap: number): string {
  return `The bundles of ${names.map((name) => `"${name}"`).join(', ')} are ${size} bytes together, above the cap of ${cap} bytes (bundlePackages option maxSetBytes): raise the cap, or bundle fewer packages`;
}

export function formatBundleOptionInvalid(name: string, rule: string, got: string): string {
  return `bundlePackages option ${name} must be ${rule}; got ${got}`;
}

export function formatBundleOptionUnknown(name: string, known: readonly string[], nearest: string | undefined): string {
  return `bundlePackages has no option "${name}"${formatDidYouMean(nearest)}; the options are ${known.join(', ')}`;
}

/** `codemode-executor bundle` with no package named. */
export const BUNDLE_NO_PACKAGES =
  'bundle needs at least one package name: codemode-executor bundle zod date-fns --out modules.json';

/** The CLI's report of a written map, on stderr. */
export function formatBundleWritten(count: number, bytes: number, out: string): string {
  return `codemode-executor bundle: wrote ${count} module${count === 1 ? '' : 's'} (${bytes} bytes) to ${out}\n`;
}

export function formatBundleOptionsNotObject(got: string): string {
  return `bundlePackages options must be an object ({from?, maxBundleBytes?, maxSetBytes?, minify?, cacheDir?, registryDir?, maxMemoryCacheBytes?}); got ${got}`;
}

/** `codemode-executor bundle --help`; the defaults come from the option rows. */
export function formatBundleUsage(rows: {
  readonly maxBundleBytes: { readonly default: number };
  readonly maxSetBytes: { readonly default: number };
}): string {
  return `Usage: codemode-executor bundle <package>[@<range>]... [options]

Bundles installed npm packages into a module map for the sandbox: a JSON object, package name to
{"js": source}, which CodemodeExecutor's execute(code, providers, { modules }) and upstream's
DynamicWorkerExecutor({ modules }) take as it is. A program imports a package by its name:
await import('zod').

Options:
  -o, --out <file>                         write the map to this file (default: stdout)
  --from <dir>                             resolve the packages from this directory's node_modules (default: the current directory)
  --cache-dir <dir>                        keep bundles here across runs, by content hash (default: none)
  --registry-dir <dir>                     fetch the packages from the npm registry into this directory, instead of
                                           resolving the installed ones (default: none)
  --max-bundle-bytes <bytes>               the largest bundle of one package (default ${rows.maxBundleBytes.default})
  --max-set-bytes <bytes>                  the largest map, its bundles together (default ${rows.maxSetBytes.default})
  --no-minify                              leave the bundles unminified
  -h, --help                               print this help
`;
}

export function formatRegistryFailed(wanted: string, detail: string): string {
  return `Cannot fetch "${wanted}" from the npm registry (bundlePackages option registryDir): ${detail}`;
}
