/**
 * The command line of `codemode-executor`: `serve` and its flags, parsed strictly, so an unknown
 * flag or a malformed value is refused with our text naming the flag.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_BUDGET_SHARE, DEFAULT_STARTING, SMALLEST_MEMBER_MB } from '../isolate/host/options/host-sizing.js';
import { isCgroupPath, minWorkersAboveMax, timeoutAboveMax } from '../isolate/host/options/rules.js';
import {
  CGROUP_FLAG,
  DEFAULT_CONFINEMENT,
  LIMIT_NUMBERS,
  type NumberRule,
  POOL_NUMBERS,
  smallestInteger,
  TOP_NUMBERS,
} from '../isolate/host/options/table.js';
import {
  CONFINEMENT_OPTIONS,
  type ConfinementOption,
  DEFAULT_LIMITS,
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_MS,
  defaultMaxStarting,
  defaultMaxWorkers,
  defaultMemoryBudgetMb,
  type IsolateExecutorOptions,
  type IsolateLimitOptions,
  type IsolatePoolOptions,
} from '../isolate/index.js';
import { DEFAULT_LOG_FORMAT, LOG_FORMATS, type LogFormat } from './log.js';
import { nearestName } from './nearest-name.js';
import type { DaemonOptions } from './run-daemon.js';
import { MAX_PORT, SERVER_DEFAULTS, SERVER_NUMBERS, TOKEN_ENV } from './server-options.js';
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

/** A daemon flag of an IsolateExecutor number option: the integers its rule in the option table takes. */
interface NumberFlag<Option extends string> {
  flag: string;
  option: Option;
  min: number;
  max: number | undefined;
}

function numberFlag<Option extends string>(option: Option, rule: NumberRule & { flag: string }): NumberFlag<Option> {
  return { flag: rule.flag, option, min: smallestInteger(rule), max: rule.max };
}

function flagsOf<Option extends string>(table: Record<Option, NumberRule>): NumberFlag<Option>[] {
  return (Object.entries(table) as [Option, NumberRule][]).flatMap(([option, rule]) =>
    rule.flag === undefined ? [] : [numberFlag(option, { ...rule, flag: rule.flag })],
  );
}

/** The pool options (`pool.*`) and size caps (`limits.*`) the command line sets, from the option table. */
const POOL_FLAGS = flagsOf(POOL_NUMBERS);
const LIMIT_FLAGS = flagsOf(LIMIT_NUMBERS);
const TIMEOUT_FLAG = numberFlag('timeout', TOP_NUMBERS.timeout);
const MAX_TIMEOUT_FLAG = numberFlag('maxTimeout', TOP_NUMBERS.maxTimeout);
const CPU_TIMEOUT_FLAG = numberFlag('cpuTimeout', TOP_NUMBERS.cpuTimeout);

const CONFINEMENT_CHOICES = CONFINEMENT_OPTIONS.join('|');

export const USAGE = `Usage: codemode-executor serve [options]

Serves an IsolateExecutor over a capnweb WebSocket, for connect() from @supolka/cloudflare-codemode-executor.

Server:
  --host <address>                       address to bind (default ${SERVER_DEFAULTS.host}); a non-loopback
                                         address needs a token
  --port <n>                             port (default ${SERVER_DEFAULTS.port}; 0 picks a free one)
  --token <token>                        bearer token clients must send (default: $${TOKEN_ENV}, else none);
                                         given more than once, each token is a tenant of its own
  --max-message-size <bytes>             largest incoming message (default ${SERVER_DEFAULTS.maxMessageSize})
  --max-executions-per-connection <n>    concurrent executions per connection (default ${SERVER_DEFAULTS.maxExecutionsPerConnection})
  --client-ping-interval <ms>            WebSocket ping period; a client missing a pong is dropped
                                         (default ${SERVER_DEFAULTS.clientPingInterval})
  --max-connections <n>                  open sessions at once (default ${SERVER_DEFAULTS.maxConnections})
  --max-send-buffer <bytes>              bytes waiting for a client that stopped reading before it is
                                         dropped (default ${SERVER_DEFAULTS.maxSendBuffer})
  --max-held-request-bytes <bytes>       bytes one connection's requests in flight (waiting or running)
                                         may hold (default ${SERVER_DEFAULTS.maxHeldRequestBytes})
  --max-held-request-bytes-total <bytes> bytes the requests in flight of all connections may hold
                                         (default ${SERVER_DEFAULTS.maxHeldRequestBytesTotal})
  --handshake-timeout <ms>               time from connecting to an authenticated upgrade (default ${SERVER_DEFAULTS.handshakeTimeout})
  --max-unauthenticated-per-peer <n>     sockets one address may hold before authenticating (default ${SERVER_DEFAULTS.maxUnauthenticatedPerPeer})
  --drain-timeout <ms>                   on SIGTERM, how long running executions may take to finish
                                         before they are cancelled (default ${SERVER_DEFAULTS.drainTimeout})
  --max-rpc-exports <n>                  entries in one session's capnweb export table (calls not yet
                                         released, stubs handed out) before it is closed (default ${SERVER_DEFAULTS.maxRpcExports})
  --max-rpc-imports <n>                  entries in one session's capnweb import table (stubs the client
                                         passed) before it is closed (default ${SERVER_DEFAULTS.maxRpcImports})
  --max-retained-per-connection <n>      retained executions one connection holds open (default ${SERVER_DEFAULTS.maxRetainedPerConnection})
  --max-retained-per-tenant <n>          retained executions one token holds open, its connections open
                                         or gone (default ${SERVER_DEFAULTS.maxRetainedPerTenant})
  --tenant-memory-percent <n>            percent of --memory-budget-mb one tenant (a token where there
                                         are several, else a connection) may hold while another is
                                         connected; beyond it its runs wait (default ${SERVER_DEFAULTS.tenantMemoryPercent})
  --retained-idle-timeout <ms>           close a retained execution unused this long, its connection
                                         open or gone (default ${SERVER_DEFAULTS.retainedIdleTimeout})
  --proxy-protocol                       expect HAProxy's PROXY protocol v2 header on every connection:
                                         per-peer bounds and logs see the client's address (default: off)
  --daemon-id <name>                     names this daemon in retained execution ids
                                         (default <hostname>:<port>)
  --admin-port <n>                       serve /healthz, /readyz and /metrics on this port (default: off)
  --admin-host <address>                 address of the admin listener (default ${SERVER_DEFAULTS.adminHost})
  ${`--log-format <${LOG_FORMATS.join('|')}>`.padEnd(37)}  log lines as timestamped text or JSON (default ${DEFAULT_LOG_FORMAT})
  --detached                             keep serving when the parent process exits (default: stop)

Sandbox (IsolateExecutor):
  --timeout <ms>                         bound of a request that sets no timeout (default ${DEFAULT_TIMEOUT_MS})
  --max-timeout <ms>                     bound a null timeout asks for, and the largest allowed
                                         (default the larger of ${DEFAULT_MAX_TIMEOUT_MS} and --timeout)
  --cpu-timeout <ms>                     CPU time a request that sets no cpuTimeout may spend
                                         (default: none, only the wall clock bounds a run)
  ${`--confinement <${CONFINEMENT_CHOICES}>`.padEnd(37)}  confine each workerd by the OS: where the host allows it,
                                         or refuse to start, or never (default ${DEFAULT_CONFINEMENT})

Pool (processes, one execution each):
  --max-workers <n>                      processes running executions at once, an upper bound: the pool
                                         grows within --memory-budget-mb (default: what the budget holds
                                         at ${SMALLEST_MEMBER_MB} MB a process, within the open-file limit; ${defaultMaxWorkers()} here)
  --min-workers <n>                      processes kept even when idle (default ${DEFAULT_POOL.minWorkers})
  --spare <n>                            warm processes kept ready beyond the busy ones (default ${DEFAULT_POOL.spare})
  --idle-timeout-ms <ms>                 end a process idle this long, beyond --min-workers and the
                                         spares (default ${DEFAULT_POOL.idleTimeoutMs})
  --max-starting <n>                     processes starting at once (default ${defaultMaxStarting()} here: ${DEFAULT_STARTING.perCore} per CPU,
                                         from ${DEFAULT_STARTING.least} to ${DEFAULT_STARTING.most})
  --max-queue <n>                        executions waiting beyond --max-workers before QUEUE_FULL (default ${DEFAULT_POOL.maxQueue})
  --recycle-after-runs <n>               replace a process after this many runs (default ${DEFAULT_POOL.recycleAfterRuns})
  --max-rss-mb <n>                       replace a process past this resident set size (default ${DEFAULT_POOL.maxRssMb})
  --heap-limit-mb <n>                    V8 heap cap of every sandbox isolate (default ${DEFAULT_POOL.heapLimitMb})
  --memory-limit-mb <n>                  memory cap of one execution: heap, buffers and WebAssembly
                                         memory together (default ${DEFAULT_POOL.memoryLimitMb})
  --memory-budget-mb <n>                 memory the processes may use together, as measured; beyond it
                                         executions wait (default: ${100 * DEFAULT_BUDGET_SHARE}% of the host's memory, its cgroup's
                                         limit where one is set; ${defaultMemoryBudgetMb()} here)
  --cgroup <path>                        a cgroup v2 directory delegated to the daemon; each process
                                         runs in a child of it capped at --memory-limit-mb (default: none)

Size caps of one execution (bytes, UTF-8 for text):
  --max-code-bytes <bytes>               a request's code, checked before anything reads it (default ${DEFAULT_LIMITS.maxCodeBytes})
  --max-request-bytes <bytes>            code and modules, or invokeHandle arguments (default ${DEFAULT_LIMITS.maxRequestBytes})
  --max-result-bytes <bytes>             the result, encoded (default ${DEFAULT_LIMITS.maxResultBytes})
  --max-tool-args-bytes <bytes>          one tool call's arguments (default ${DEFAULT_LIMITS.maxToolArgsBytes})
  --max-tool-result-bytes <bytes>        one tool call's result (default ${DEFAULT_LIMITS.maxToolResultBytes})
  --max-log-lines <n>                    console lines kept (default ${DEFAULT_LIMITS.maxLogLines})
  --max-log-bytes <bytes>                console text kept (default ${DEFAULT_LIMITS.maxLogBytes})
  --max-request-body-bytes <bytes>       one outbound fetch's request body (default ${DEFAULT_LIMITS.maxRequestBodyBytes})
  --max-response-body-bytes <bytes>      one outbound fetch's response body (default ${DEFAULT_LIMITS.maxResponseBodyBytes})
  --max-concurrent-fetches <n>           fetches one run may have in flight (default ${DEFAULT_LIMITS.maxConcurrentFetches})
  --max-concurrent-tool-calls <n>        tool calls one execution may have waiting on the host (default ${DEFAULT_LIMITS.maxConcurrentToolCalls})
  --max-concurrent-tool-args-bytes <bytes>
                                         their arguments together (default ${DEFAULT_LIMITS.maxConcurrentToolArgsBytes})
  --max-process-output-bytes <bytes>     what a run's process may write to its stdout and stderr
                                         (default ${DEFAULT_LIMITS.maxProcessOutputBytes})

  -h, --help                             this text
  -V, --version                          the package's version and its wire protocol's (-v too)
`;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** The IsolateExecutor options the command line sets; unset ones keep IsolateExecutor's defaults. */
type ExecutorFlags = IsolateExecutorOptions & { pool: IsolatePoolOptions; limits: IsolateLimitOptions };

/** Flag name → server option, with the smallest value each takes (from `SERVER_NUMBERS`). */
const SERVER_FLAGS = (
  Object.entries(SERVER_NUMBERS) as [keyof typeof SERVER_NUMBERS, { min: number; max?: number; flag: string }][]
).map(([option, { min, max, flag }]) => [flag, option, min, max] as const);

const STRING_FLAGS = [
  'host',
  'port',
  'daemon-id',
  'admin-port',
  'admin-host',
  'log-format',
  TIMEOUT_FLAG.flag,
  MAX_TIMEOUT_FLAG.flag,
  CPU_TIMEOUT_FLAG.flag,
  'confinement',
  CGROUP_FLAG,
];

export type CliCommand =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'serve'; daemon: DaemonOptions; executor: ExecutorFlags };

function integer(flag: string, text: string | undefined, min: number, max?: number): number | undefined {
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

export function parseCommandLine(argv: string[], env: Record<string, string | undefined>): CliCommand {
  const parsed = parse(argv);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const text = (flag: string) => values[flag] as string | undefined;
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
    if (value !== undefined) executor.pool[option] = value;
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
  const confinement = text('confinement');
  if (confinement !== undefined) {
    if (!(CONFINEMENT_OPTIONS as readonly string[]).includes(confinement)) {
      throw new UsageError(formatConfinementInvalid(confinement, CONFINEMENT_OPTIONS));
    }
    executor.confinement = confinement as ConfinementOption;
  }
  for (const { flag, option, min, max } of [CPU_TIMEOUT_FLAG, TIMEOUT_FLAG, MAX_TIMEOUT_FLAG]) {
    const value = integer(flag, text(flag), min, max);
    if (value !== undefined) executor[option] = value;
  }
  // Checked here, so the text names the flags rather than IsolateExecutor's options.
  const timeoutBreach = timeoutAboveMax(executor.timeout, executor.maxTimeout);
  if (timeoutBreach !== null) {
    const { timeout, maxTimeout } = timeoutBreach;
    throw new UsageError(formatTimeoutAboveMaxTimeout(timeout, maxTimeout, executor.timeout !== undefined));
  }
  return { command: 'serve', daemon, executor };
}
