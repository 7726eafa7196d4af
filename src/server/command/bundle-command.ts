/**
 * `codemode-executor bundle zod date-fns --out modules.json`: bundlePackages from the command line,
 * for a host that builds its module map ahead of time (docs/packages.md).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BUNDLE_ROWS, type BundleOptions, bundlePackages } from '../../bundle/index.js';
import { BUNDLE_NO_PACKAGES, formatBundleUsage, formatBundleWritten } from '../../bundle/texts.js';
import { nearestName } from '../../protocol/nearest-name.js';
import { formatFlagNeedsValue, formatFlagNotInteger, formatFlagOutOfRange, formatUnknownFlag } from '../texts.js';
import { UsageError } from './cli-args.js';

const OPTIONS = {
  out: { type: 'string' as const, short: 'o' },
  from: { type: 'string' as const },
  'cache-dir': { type: 'string' as const },
  'registry-dir': { type: 'string' as const },
  'max-bundle-bytes': { type: 'string' as const },
  'max-set-bytes': { type: 'string' as const },
  'no-minify': { type: 'boolean' as const },
  help: { type: 'boolean' as const, short: 'h' },
};

/** What `bundle` was asked: the packages, the options, where the map goes (stdout when undefined). */
export interface BundleCommand {
  help: boolean;
  specs: string[];
  options: BundleOptions;
  out: string | undefined;
}

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const flag = /'(--?[^' ]+)/.exec(message ?? '')?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const known = nearestName(flag.replace(/^--?/, '').split('=')[0]!, Object.keys(OPTIONS));
      return new UsageError(formatUnknownFlag(flag, known === undefined ? undefined : `--${known}`));
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return new UsageError(formatFlagNeedsValue(flag));
    return new UsageError(message ?? String(error));
  }
}

function bytesOf(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) throw new UsageError(formatFlagNotInteger(flag, 1, text));
  if (value < 1) throw new UsageError(formatFlagOutOfRange(flag, 1, undefined, value));
  return value;
}

/** The `bundle` command line (after the word `bundle`), checked; throws UsageError naming the flag. */
export function parseBundleCommand(argv: string[]): BundleCommand {
  const parsed = parse(argv);
  if (parsed instanceof UsageError) throw parsed;
  const { values, positionals } = parsed;
  if (values.help === true) return { help: true, specs: [], options: {}, out: undefined };
  if (positionals.length === 0) throw new UsageError(BUNDLE_NO_PACKAGES);
  const options: BundleOptions = {};
  if (values.from !== undefined) options.from = values.from;
  if (values['cache-dir'] !== undefined) options.cacheDir = values['cache-dir'];
  if (values['registry-dir'] !== undefined) options.registryDir = values['registry-dir'];
  const maxBundleBytes = bytesOf('max-bundle-bytes', values['max-bundle-bytes']);
  if (maxBundleBytes !== undefined) options.maxBundleBytes = maxBundleBytes;
  const maxSetBytes = bytesOf('max-set-bytes', values['max-set-bytes']);
  if (maxSetBytes !== undefined) options.maxSetBytes = maxSetBytes;
  if (values['no-minify'] === true) options.minify = false;
  return { help: false, specs: positionals, options, out: values.out };
}

/** Runs `bundle`: the map as JSON to `--out`, or to stdout. */
export async function runBundleCommand(argv: string[]): Promise<void> {
  const command = parseBundleCommand(argv);
  if (command.help) {
    process.stdout.write(formatBundleUsage(BUNDLE_ROWS));
    return;
  }
  const map = await bundlePackages(command.specs, command.options);
  const json = `${JSON.stringify(map)}\n`;
  if (command.out === undefined) {
    process.stdout.write(json);
    return;
  }
  writeFileSync(command.out, json);
  process.stderr.write(formatBundleWritten(Object.keys(map).length, Buffer.byteLength(json), command.out));
}
