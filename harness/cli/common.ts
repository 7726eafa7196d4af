/**
 * What the case and matrix commands share: option parsing with `--help` and errors that name the
 * flag, the column list, and a clean stop on Ctrl-C (every column stopped, one line printed, no
 * spurious failures, exit 130).
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { nearestName } from '../../src/protocol/nearest-name.js';
import { COLUMN_IDS, type ColumnId, isColumnId } from '../columns.js';
import type { Engine } from '../engine.js';
import { texts } from '../texts.js';

/** Exit code of a run that could not be made: a bad option, a malformed catalogue. */
export const USAGE_ERROR = 2;
export const INTERRUPTED = 130;

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses argv; `--help` prints the usage and exits 0; a bad option is a UsageError naming it, with the usage. */
export function parseCommand(
  argv: readonly string[],
  options: Options,
  usage: string,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    const values = parsed.values as Record<string, string | boolean | undefined>;
    if (values.help) {
      console.log(usage);
      process.exit(0);
    }
    return { values, positionals: parsed.positionals };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const flag = /'(-[^' ]+)/.exec((error as Error).message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const nearest = flag === undefined ? undefined : closestOption(flag, options);
      throw new UsageError(texts.cli.unknownOption(flag ?? '?', nearest, usage));
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(texts.cli.needsValue(flag ?? '?', usage));
    throw error;
  }
}

/** The option an unknown one most likely meant, as `--name`, by the daemon's rule (nearest-name.ts). */
function closestOption(flag: string, options: Options): string | undefined {
  const known = nearestName(flag.replace(/^--?/, '').split('=')[0]!, [...Object.keys(options), 'help']);
  return known === undefined ? undefined : `--${known}`;
}

/**
 * `--columns a,b` (or `all`) as column ids; an id outside `known` (the columns the command runs) is a
 * UsageError naming them.
 */
export function parseColumns(
  value: string | undefined,
  fallback: readonly ColumnId[],
  all: readonly ColumnId[] = COLUMN_IDS,
  known: readonly ColumnId[] = COLUMN_IDS,
): ColumnId[] {
  if (value === undefined) return [...fallback];
  if (value === 'all') return [...all];
  const asked = value.split(',').filter(Boolean);
  const unknown = asked.filter((id) => !isColumnId(id) || !known.includes(id));
  if (unknown.length > 0 || asked.length === 0) throw new UsageError(texts.cli.unknownColumns(unknown, known));
  return asked as ColumnId[];
}

/**
 * On SIGINT or SIGTERM: say so once, stop every column, exit 130. A terminal's Ctrl-C reaches the
 * whole foreground group, so the processes we started may already be dying; whatever fails after
 * the signal is not a result and is not printed.
 */
export function stopOnSignals(engine: Engine, print: (line: string) => void): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    print(texts.progress.interrupted(signal));
    void engine.abort().finally(() => process.exit(INTERRUPTED));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Runs a command's main; a UsageError or a malformed catalogue exits 2 with its message alone. */
export function runCommand(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      const known = error instanceof UsageError || (error as Error)?.name === 'CaseFileError';
      console.error(
        known ? (error as Error).message : error instanceof Error ? (error.stack ?? error.message) : String(error),
      );
      process.exit(USAGE_ERROR);
    },
  );
}
