/**
 * The command line of `codemode-executor`: `serve` and its flags, parsed strictly, so an unknown
 * flag or a malformed number is refused with a message naming it.
 */
import { parseArgs } from 'node:util';
import type { IsolatePoolOptions } from '../isolate/index.js';
import type { ExecutorServerOptions } from './executor-server.js';
import { SERVER_DEFAULTS } from './executor-server.js';

export const TOKEN_ENV = 'CODEMODE_EXECUTOR_TOKEN';

export const USAGE = `Usage: codemode-executor serve [options]

Serves an IsolateExecutor over a capnweb WebSocket (see docs/remote.md).

Options:
  --host <address>                      address to bind (default ${SERVER_DEFAULTS.host}); a non-loopback
                                        address needs a token
  --port <n>                            port (default ${SERVER_DEFAULTS.port}; 0 picks a free one)
  --token <token>                       bearer token clients must send (or $${TOKEN_ENV})
  --max-message-size <bytes>            largest incoming message (default ${SERVER_DEFAULTS.maxMessageSize})
  --max-executions-per-connection <n>   concurrent executions per connection (default ${SERVER_DEFAULTS.maxExecutionsPerConnection})
  --client-ping-interval <ms>           WebSocket ping period; a client missing a pong is dropped
                                        (default ${SERVER_DEFAULTS.clientPingInterval})
IsolateExecutor options (defaults: see docs/isolate.md):
  --timeout <ms>                        bound of a request that sets no timeout
  --max-timeout <ms>                    bound a null timeout asks for, and the largest allowed
  --max-workers <n>                     workerd processes running executions at once
  --spare <n>                           warm processes kept ready beyond the busy ones
  --max-queue <n>                       executions waiting for a process before QUEUE_FULL
  --recycle-after-runs <n>              replace a process after this many runs
  --max-rss-mb <n>                      replace a process past this resident set size
  --heap-limit-mb <n>                   V8 heap cap of every sandbox isolate
  -h, --help                            this text
`;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** The IsolateExecutor options the command line sets; unset ones keep IsolateExecutor's defaults. */
interface ExecutorFlags {
  timeout?: number;
  maxTimeout?: number;
  pool: IsolatePoolOptions;
}

/** Flag name → IsolateExecutor pool option, with the smallest value each takes. */
const POOL_FLAGS = [
  ['max-workers', 'maxWorkers', 1],
  ['spare', 'spare', 0],
  ['max-queue', 'maxQueue', 0],
  ['recycle-after-runs', 'recycleAfterRuns', 1],
  ['max-rss-mb', 'maxRssMb', 1],
  ['heap-limit-mb', 'heapLimitMb', 16],
] as const;

export type CliCommand =
  | { command: 'help' }
  | { command: 'serve'; server: Omit<ExecutorServerOptions, 'executor' | 'log'>; executor: ExecutorFlags };

function integer(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`--${flag} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  }
  return value;
}

export function parseCommandLine(argv: string[], env: Record<string, string | undefined>): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'max-message-size': { type: 'string' },
        'max-executions-per-connection': { type: 'string' },
        'client-ping-interval': { type: 'string' },
        ...Object.fromEntries(POOL_FLAGS.map(([flag]) => [flag, { type: 'string' as const }])),
        timeout: { type: 'string' },
        'max-timeout': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  if (positionals.length !== 1 || positionals[0] !== 'serve') {
    throw new UsageError(
      positionals.length === 0 ? 'Missing command: serve' : `Unknown command: ${positionals.join(' ')}`,
    );
  }
  // An empty variable counts as unset, so `CODEMODE_EXECUTOR_TOKEN=` does not mean "the empty token".
  const token = values.token ?? (env[TOKEN_ENV] || undefined);
  if (token === '') throw new UsageError('--token must not be empty');
  const server: Omit<ExecutorServerOptions, 'executor' | 'log'> = {};
  if (values.host !== undefined) server.host = values.host;
  if (token !== undefined) server.token = token;
  const port = integer('port', values.port, 0);
  if (port !== undefined) {
    if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
    server.port = port;
  }
  const maxMessageSize = integer('max-message-size', values['max-message-size'], 1);
  if (maxMessageSize !== undefined) server.maxMessageSize = maxMessageSize;
  const perConnection = integer('max-executions-per-connection', values['max-executions-per-connection'], 1);
  if (perConnection !== undefined) server.maxExecutionsPerConnection = perConnection;
  const ping = integer('client-ping-interval', values['client-ping-interval'], 1);
  if (ping !== undefined) server.clientPingInterval = ping;
  const executor: ExecutorFlags = { pool: {} };
  for (const [flag, option, min] of POOL_FLAGS) {
    const value = integer(flag, (values as Record<string, string | undefined>)[flag], min);
    if (value !== undefined) executor.pool[option] = value;
  }
  const timeout = integer('timeout', values.timeout, 1);
  if (timeout !== undefined) executor.timeout = timeout;
  const maxTimeout = integer('max-timeout', values['max-timeout'], 1);
  if (maxTimeout !== undefined) executor.maxTimeout = maxTimeout;
  return { command: 'serve', server, executor };
}
