/**
 * One package bundled by esbuild into one ES module for the sandbox, and what cannot work there
 * refused with the package, the import chain and the reason.
 */

import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative, sep } from 'node:path';
import * as esbuild from 'esbuild';
import type { InstalledPackage } from './locate.js';
import { findComputedRequires, findEvalCalls } from './sandbox-scan.js';
import {
  formatBuiltinRefused,
  formatBundlerFailed,
  formatDynamicRequireRefused,
  formatEvalRefused,
  formatNativeAddonRefused,
} from './texts.js';

/** A package the sandbox cannot run, as bundling found it. */
export class BundleRefusal extends Error {
  override name = 'BundleRefusal';
  constructor(
    message: string,
    /** The package asked for. */
    readonly packageName: string,
    /** From the package to what is refused: the package, each file on the way, the culprit. */
    readonly chain: readonly string[],
  ) {
    super(message);
  }
}

/** The export conditions honoured, in order: what a Worker would be given first. */
const CONDITIONS = ['worker', 'browser', 'import'] as const;

/** What the bundler is told beyond the package; part of the cache key. */
export function bundlerSettings(minify: boolean): string {
  return JSON.stringify({ esbuild: esbuild.version, conditions: CONDITIONS, target: TARGET, minify, defines: DEFINES });
}

const TARGET = 'es2022';

/**
 * The `process.env` shim: a package reads `NODE_ENV` as "production" and every other variable as
 * undefined, as the sandbox has no environment; `global` is `globalThis`.
 */
const DEFINES = { 'process.env.NODE_ENV': '"production"', 'process.env': '{}', global: 'globalThis' };

const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const BUILTIN_FILTER = /^(node:.*|[a-z_/]+)$/;

/** A metafile path as a reader knows it: from the package's name on (`zod/v4/core/util.js`). */
function displayPath(path: string): string {
  const at = path.lastIndexOf('node_modules/');
  return at === -1 ? path : path.slice(at + 'node_modules/'.length);
}

/** The chain of imports from the entry to `target`, breadth first, as display paths. */
function importChain(metafile: esbuild.Metafile, entry: string, target: string): string[] {
  const previous = new Map<string, string>([[entry, entry]]);
  const queue = [entry];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (at === target) break;
    for (const { path } of metafile.inputs[at]?.imports ?? []) {
      if (previous.has(path)) continue;
      previous.set(path, at);
      queue.push(path);
    }
  }
  const chain = [target];
  let at = target;
  while (at !== entry && previous.has(at)) {
    at = previous.get(at)!;
    chain.unshift(at);
  }
  return chain.map(displayPath);
}

/** The package bundled into one ES module, unminified, and the metafile of what it read. */
async function build(pkg: InstalledPackage, from: string) {
  const refused: { kind: 'builtin' | 'addon'; name: string; importer: string }[] = [];
  const entryPlugin: esbuild.Plugin = {
    name: 'codemode-package-entry',
    setup(b) {
      // The entry is the package itself, so the module's exports are exactly the package's.
      b.onResolve({ filter: /^codemode-package-entry$/ }, async () => {
        const found = await b.resolve(pkg.name, { kind: 'import-statement', resolveDir: from });
        return found.errors.length > 0 ? { errors: found.errors } : { path: found.path };
      });
      b.onResolve({ filter: BUILTIN_FILTER }, async (args) => {
        if (!BUILTINS.has(args.path) || args.pluginData === 'builtin-check') return undefined;
        // A package may map a built-in away (`"browser": {"fs": false}`); esbuild's own resolution knows.
        const mapped = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: 'builtin-check',
        });
        if (mapped.errors.length === 0) return undefined;
        refused.push({ kind: 'builtin', name: args.path, importer: args.importer });
        return { path: args.path, external: true };
      });
      b.onResolve({ filter: /\.node$/ }, (args) => {
        refused.push({ kind: 'addon', name: args.path, importer: args.importer });
        return { path: args.path, external: true };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: ['codemode-package-entry'],
    absWorkingDir: from,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: TARGET,
    conditions: [...CONDITIONS],
    define: DEFINES,
    metafile: true,
    logLevel: 'silent',
    legalComments: 'none',
    plugins: [entryPlugin],
  });
  return { result, refused };
}

/** Bundles one package; throws `BundleRefusal` for what the sandbox cannot run. */
export async function bundleOne(pkg: InstalledPackage, from: string, minify: boolean): Promise<string> {
  let built: Awaited<ReturnType<typeof build>>;
  try {
    built = await build(pkg, from);
  } catch (error) {
    const failure = error as { errors?: esbuild.Message[]; message?: string };
    const first = failure.errors?.[0];
    const detail =
      first === undefined
        ? String(failure.message)
        : `${first.text}${first.location === null ? '' : ` (${displayPath(first.location.file)}:${first.location.line})`}`;
    throw new BundleRefusal(formatBundlerFailed(pkg.name, detail), pkg.name, [pkg.name]);
  }
  const { result, refused } = built;
  const metafile = result.metafile;
  const entry = Object.values(metafile.outputs)[0]?.entryPoint ?? Object.keys(metafile.inputs)[0]!;
  const chainTo = (importer: string, last: string) => [pkg.name, ...importChain(metafile, entry, importer), last];
  const first = refused[0];
  if (first !== undefined) {
    const chain = chainTo(first.importer && relative(from, first.importer).split(sep).join('/'), first.name);
    throw new BundleRefusal(
      first.kind === 'builtin'
        ? formatBuiltinRefused(pkg.name, first.name, chain)
        : formatNativeAddonRefused(pkg.name, first.name, chain),
      pkg.name,
      chain,
    );
  }
  for (const file of Object.keys(metafile.inputs)) {
    if (!/\.[cm]?js$/.test(file)) continue;
    const text = readFileSync(join(from, file), 'utf8');
    const chain = () => [pkg.name, ...importChain(metafile, entry, file)];
    const requireLine = findComputedRequires(text)[0];
    if (requireLine !== undefined) {
      const site = `${displayPath(file)}:${requireLine}`;
      throw new BundleRefusal(formatDynamicRequireRefused(pkg.name, site, chain()), pkg.name, chain());
    }
    const evalCall = findEvalCalls(text)[0];
    if (evalCall !== undefined) {
      const site = `${displayPath(file)}:${evalCall.line}`;
      throw new BundleRefusal(formatEvalRefused(pkg.name, evalCall.form, site, chain()), pkg.name, chain());
    }
  }
  const source = result.outputFiles[0]!.text;
  if (!minify) return source;
  return (await esbuild.transform(source, { minify: true, format: 'esm', target: TARGET, legalComments: 'none' })).code;
}
