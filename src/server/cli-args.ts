/**
 * The command line of `codemode-executor`: `serve` and its flags, parsed strictly, so an unknown
 * flag or a malformed value is refused with our text naming the flag.
 */
import { parseArgs } from 'node:util';
import {
  CONFINEMENT_OPTIONS,
  type ConfinementOption,
  ISOLATE_OPTION_ROWS,
  ISOLATE_OPTION_RULES,
  type IsolateExecutorOptions,
  type IsolateLimitOptions,
  type IsolateOptionRow,
  type IsolatePoolOptions,
} from '../isolate/index.js';
import { nearestName } from '../protocol/nearest-name.js';
import { smallestInteger } from '../protocol/option-schema.js';
import { formatRenamedOption } from '../protocol/texts.js';
import { warnOnce } from '../protocol/warn-once.js';
import { LOG_FORMATS, type LogFormat } from './log.js';
import type { DaemonOptions } from './run-daemon.js';
import { MAX_PORT, SERVER_NUMBERS, SERVER_ROWS, TOKEN_ENV } from './server-options.js';
import {
  ADMIN_HOST_WITHOUT_PORT,
  formatCgroupNotAbsolute,
  formatConfinementInvalid,
  formatFlagNeedsValue,
  formatFlagNotInteger,
  formatFlagOutOfRange,
  formatLogFormatInvalid,
  formatMinWorkersAboveMax,
  formatMissingCommand,
  formatTimeoutAboveMaxTimeout,
  formatUnknownCommand,
  formatUnknownFlag,
  TOKEN_EMPTY,
} from './texts.js';
import { USAGE } from './usage.js';

export { USAGE } from './usage.js';

const { isCgroupPath, minWorkersAboveMax, timeoutAboveMax } = ISOLATE_OPTION_RULES;

/** A daemon flag of an IsolateExecutor number option: the integers its row takes. */
interface NumberFlag<Option extends string> {
  flag: string;
  option: Option;
  min: number;
  max: number | undefined;
}

/** The number options of a group of rows that have a flag. */
function flagsOf<Option extends string>(rows: Readonly<Record<Option, IsolateOptionRow>>): NumberFlag<Option>[] {
  return (Object.entries(rows) as [Option, IsolateOptionRow][]).flatMap(([option, row]) =>
    row.flag === undefined || row.bounds === undefined
      ? []
      : [{ flag: row.flag, option, min: smallestInteger(row.bounds), max: row.bounds.max }],
  );
}

/** The pool options (`pool.*`) and size caps (`limits.*`) the command line sets, from their rows. */
const POOL_FLAGS = flagsOf(ISOLATE_OPTION_ROWS.pool);
const LIMIT_FLAGS = flagsOf(ISOLATE_OPTION_ROWS.limits);
const TOP_FLAGS = flagsOf(ISOLATE_OPTION_ROWS.top);
const CGROUP_FLAG = ISOLATE_OPTION_ROWS.pool.cgroup.flag;
const CONFINEMENT_FLAG = ISOLATE_OPTION_ROWS.top.confinement.flag;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** The IsolateExecutor options the command line sets; unset ones keep IsolateExecutor's defaults. */
type ExecutorFlags = IsolateExecutorOptions & { pool: IsolatePoolOptions; limits: IsolateLimitOptions };

/** Flag name → server option, with the smallest value each takes (from `SERVER_NUMBERS`). */
const SERVER_FLAGS = (
  Object.entries(SERVER_NUMBERS) as [keyof typeof SERVER_NUMBERS, { min: number; max?: number; flag: string }][]
).map(([option, { min, max, flag }]) => [flag, option, min, max] as const);

/** A renamed flag's old name → its new one, from the rows' `renamedFrom`. */
const RENAMED_FLAGS = new Map(
  [...Object.values(SERVER_ROWS), ...Object.values(ISOLATE_OPTION_ROWS).flatMap((rows) => Object.values(rows))].flatMap(
    (row) => {
      const renamed: { flag?: string } | undefined = 'renamedFrom' in row ? row.renamedFrom : undefined;
      return renamed?.flag === undefined || row.flag === undefined ? [] : [[renamed.flag, row.flag] as const];
    },
  ),
);

const STRING_FLAGS = [
  'host',
  'port',
  'daemon-id',
  'admin-port',
  'admin-host',
  'log-format',
  ...TOP_FLAGS.map(({ flag }) => flag),
  CONFINEMENT_FLAG,
  CGROUP_FLAG,
  ...RENAMED_FLAGS.keys(),
];

export type CliCommand =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'serve'; daemon: DaemonOptions; executor: ExecutorFlags };

function integerOf(flag: string, text: string | undefined, min: number, max?: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new UsageError(formatFlagNotInteger(flag, min, text));
  }
  if (value < min || (max !== undefined && value > max)) {
    throw new UsageError(formatFlagOutOfRange(flag, min, max, value));
  }
  return value;
}

/** The usage line, first in --help, which a missing command prints. */
const USAGE_LINE = USAGE.split('\n')[0]!;

/** The known flag nearest to an unknown one (nearest-name.ts); undefined when none is near. */
function closestFlag(flag: string): string | undefined {
  const known = nearestName(flag.replace(/^--?/, '').split('=')[0]!, Object.keys(OPTIONS));
  return known === undefined ? undefined : `--${known}`;
}

/** Node's parseArgs texts name the flag but read oddly (and quote unevenly); ours replace them. */
function parseFailure(error: unknown): UsageError {
  const { code, message } = error as { code?: string; message?: string };
  const flag = /'(--?[^' ]+)/.exec(message ?? '')?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(formatUnknownFlag(flag, closestFlag(flag)));
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return new UsageError(formatFlagNeedsValue(flag));
  return new UsageError(message ?? String(error));
}

const OPTIONS = {
  ...Object.fromEntries(STRING_FLAGS.map((flag) => [flag, { type: 'string' as const }])),
  ...Object.fromEntries(SERVER_FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
  ...Object.fromEntries(POOL_FLAGS.map(({ flag }) => [flag, { type: 'string' as const }])),
  ...Object.fromEntries(LIMIT_FLAGS.map(({ flag }) => [flag, { type: 'string' as const }])),
  // Several tokens: each is a tenant of its own.
  token: { type: 'string' as const, multiple: true },
  detached: { type: 'boolean' as const },
  'proxy-protocol': { type: 'boolean' as const },
  help: { type: 'boolean' as const, short: 'h' },
  version: { type: 'boolean' as const, short: 'V' },
};

/**
 * `--port -1` as `--port=-1`: parseArgs takes a value that starts with a dash for a flag, and
 * would say `--port needs a value` where the value is only out of range.
 */
function joinNegativeValues(argv: string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    const next = argv[index + 1];
    const flag = arg.startsWith('--') ? (OPTIONS as Record<string, { type: string }>)[arg.slice(2)] : undefined;
    if (flag?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else joined.push(arg);
  }
  return joined;
}

function parse(argv: string[]) {
  try {
    // `-v` is taken as `-V`, as many tools take either for the version.
    const args = joinNegativeValues(argv).map((arg) => (arg === '-v' ? '-V' : arg));
    return parseArgs({ args, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw parseFailure(error);
  }
}

/**
 * The flags as given, each renamed one moved to its new name with a warning (once a process); the
 * new name wins where both are given. `given` maps a flag to the name it was given under, for a refusal.
 */
function takeRenamedFlags(values: Record<string, string | boolean | undefined>, given: Map<string, string>): void {
  for (const [old, flag] of RENAMED_FLAGS) {
    if (values[old] === undefined) continue;
    const both = values[flag] !== undefined;
    warnOnce(formatRenamedOption('codemode-executor serve', `--${old}`, `--${flag}`, both));
    if (!both) {
      values[flag] = values[old];
      given.set(flag, old);
    }
    delete values[old];
  }
}

export function parseCommandLine(argv: string[], env: Record<string, string | undefined>): CliCommand {
  const parsed = parse(argv);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const givenAs = new Map<string, string>();
  takeRenamedFlags(values, givenAs);
  const text = (flag: string) => values[flag] as string | undefined;
  const integer = (flag: string, value: string | undefined, min: number, max?: number) =>
    integerOf(givenAs.get(flag) ?? flag, value, min, max);
  if (values.help) return { command: 'help' };
  if (values.version) return { command: 'version' };
  const { positionals } = parsed;
  if (positionals.length !== 1 || positionals[0] !== 'serve') {
    throw new UsageError(
      positionals.length === 0 ? formatMissingCommand(USAGE_LINE) : formatUnknownCommand(positionals.join(' ')),
    );
  }
  // An empty variable counts as unset, so `CODEMODE_EXECUTOR_TOKEN=` does not mean "the empty token".
  const flagTokens = values.token as unknown as string[] | undefined;
  const envToken = env[TOKEN_ENV] || undefined;
  const tokens = flagTokens ?? (envToken === undefined ? undefined : [envToken]);
  if (tokens?.includes('')) throw new UsageError(TOKEN_EMPTY);
  const token = tokens === undefined ? undefined : tokens.length === 1 ? tokens[0] : tokens;
  const daemon: DaemonOptions = {};
  const host = text('host');
  if (host !== undefined) daemon.host = host;
  if (token !== undefined) daemon.token = token;
  const port = integer('port', text('port'), 0, MAX_PORT);
  if (port !== undefined) daemon.port = port;
  for (const [flag, option, min, max] of SERVER_FLAGS) {
    const value = integer(flag, text(flag), min, max);
    if (value !== undefined) daemon[option] = value;
  }
  const daemonId = text('daemon-id');
  if (daemonId !== undefined) daemon.daemonId = daemonId;
  const adminPort = integer('admin-port', text('admin-port'), 0, MAX_PORT);
  const adminHost = text('admin-host');
  if (adminHost !== undefined && adminPort === undefined) throw new UsageError(ADMIN_HOST_WITHOUT_PORT);
  if (adminPort !== undefined)
    daemon.admin = { port: adminPort, ...(adminHost === undefined ? {} : { host: adminHost }) };
  const logFormat = text('log-format');
  if (logFormat !== undefined) {
    if (!(LOG_FORMATS as readonly string[]).includes(logFormat))
      throw new UsageError(formatLogFormatInvalid(logFormat));
    daemon.logFormat = logFormat as LogFormat;
  }
  if (values.detached === true) daemon.detached = true;
  if (values['proxy-protocol'] === true) daemon.proxyProtocol = true;

  const executor: ExecutorFlags = { pool: {}, limits: {} };
  for (const { flag, option, min, max } of POOL_FLAGS) {
    const value = integer(flag, text(flag), min, max);
    if (value !== undefined) Object.assign(executor.pool, { [option]: value });
  }
  for (const { flag, option, min, max } of LIMIT_FLAGS) {
    const value = integer(flag, text(flag), min, max);
    if (value !== undefined) executor.limits[option] = value;
  }
  const workersBreach = minWorkersAboveMax(executor.pool);
  if (workersBreach !== null) {
    const { minWorkers, maxWorkers } = workersBreach;
    throw new UsageError(formatMinWorkersAboveMax(minWorkers, maxWorkers, executor.pool.maxWorkers !== undefined));
  }
  const cgroup = text(CGROUP_FLAG);
  if (cgroup !== undefined) {
    if (!isCgroupPath(cgroup)) throw new UsageError(formatCgroupNotAbsolute(cgroup));
    executor.pool.cgroup = cgroup;
  }
  const confinement = text(CONFINEMENT_FLAG);
  if (confinement !== undefined) {
    if (!(CONFINEMENT_OPTIONS as readonly string[]).includes(confinement)) {
      throw new UsageError(formatConfinementInvalid(confinement, CONFINEMENT_OPTIONS));
    }
    executor.confinement = confinement as ConfinementOption;
  }
  for (const { flag, option, min, max } of TOP_FLAGS) {
    const value = integer(flag, text(flag), min, max);
    if (value !== undefined) Object.assign(executor, { [option]: value });
  }
  // Checked here, so the text names the flags rather than IsolateExecutor's options.
  const timeoutBreach = timeoutAboveMax(executor.timeout, executor.maxTimeout);
  if (timeoutBreach !== null) {
    const { timeout, maxTimeout } = timeoutBreach;
    throw new UsageError(formatTimeoutAboveMaxTimeout(timeout, maxTimeout, executor.timeout !== undefined));
  }
  return { command: 'serve', daemon, executor };
}
