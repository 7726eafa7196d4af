/**
 * The option schema of `createExecutorServer`: one valibot schema (src/protocol/parse-options.ts)
 * whose options each carry their row, in the order --help lists their flags. One parse checks every
 * option (server-options.ts), `ExecutorServerOptions` is inferred from it, and --help, the command
 * line (src/server/command/) and docs/remote.md's flag table read its rows. Beside it, the command
 * line's own flags (`DAEMON_ROWS`).
 */
import * as v from 'valibot';
import { functionValue, option, optionalGroup, optionsSchema, requiredOption } from '../../protocol/parse-options.js';
import type { Executor } from '../../protocol/types.js';
import { DEFAULT_LOG_FORMAT, LOG_FORMATS, type LogSink } from '../observe/log.js';
import { isValidDaemonId } from '../retained/handle-ids.js';
import { SERVER_BOUNDS, type ServerOptionRow } from './server-bounds.js';

/** The environment variable the daemon's CLI reads its bearer token from when `--token` is not given. */
export const TOKEN_ENV = 'CODEMODE_EXECUTOR_TOKEN';
/** The largest TCP port: the listener's and the admin listener's ports are from 0 (any free one) to this. */
export const MAX_PORT = 65_535;
const PORT_RULE = `a port number (0 to ${MAX_PORT})`;

function isPort(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0 && value <= MAX_PORT;
}

/** An address to bind; `null` stands for the default, as undefined does. */
const address = v.pipe(
  v.nullable(v.string()),
  v.check((host) => host !== ''),
);

function isTokens(value: unknown): value is string | readonly string[] {
  const isToken = (token: unknown) => typeof token === 'string' && token !== '';
  return Array.isArray(value) ? value.length > 0 && value.every(isToken) : isToken(value);
}

/** The admin listener, `{ host?, port }`: other keys are let be, as they always were. */
const ADMIN_SCHEMA = optionsSchema(
  {
    port: requiredOption(v.pipe(v.number(), v.check(isPort)), {
      type: 'integer',
      defaultText: 'off',
      rule: PORT_RULE,
      flag: 'admin-port',
      flagHelp: 'serve /healthz, /readyz and /metrics on this port',
      description: 'serve `/healthz`, `/readyz` and `/metrics` on this port (docs/fleet.md)',
    }),
    host: option(address, {
      type: 'string',
      default: '127.0.0.1',
      rule: 'an address',
      flag: 'admin-host',
      flagHelp: 'address of the admin listener',
      description: 'address of the admin listener',
    }),
  },
  { others: 'ignored' },
);

export const SERVER_SCHEMA = optionsSchema({
  /** The native executor every connection shares. The server does not dispose it. */
  executor: requiredOption(
    v.custom<Executor>((value) => typeof value === 'object' && value !== null),
    { type: 'object', rule: 'an Executor', description: 'the native executor every connection shares' },
  ),
  /** Default `127.0.0.1`. A non-loopback address needs a `token`. */
  host: option(address, {
    type: 'string',
    default: '127.0.0.1',
    rule: 'an address',
    flag: 'host',
    flagHelp: 'address to bind; a non-loopback address needs a token',
    description: 'address to bind; a non-loopback address needs a token',
  }),
  /** Default 8787; 0 picks a free one. */
  port: option(v.pipe(v.number(), v.check(isPort)), {
    type: 'integer',
    unit: 'count',
    default: 8787,
    rule: PORT_RULE,
    flag: 'port',
    flagHelp: 'port (0 picks a free one)',
    description: 'port; `0` picks a free one (read it from the `listening on` line)',
  }),
  /**
   * The bearer token clients must send as `Authorization: Bearer <token>`, or several: each is a
   * tenant of its own, held to its share of the memory budget and its own retained executions.
   */
  token: option(v.custom<string | readonly string[]>(isTokens), {
    type: 'string',
    rule: 'a non-empty string, or an array of them',
    flag: 'token',
    env: TOKEN_ENV,
    defaultText: `\`$${TOKEN_ENV}\`, else none`,
    flagHelp: 'bearer token clients must send; given more than once, each token is a tenant of its own',
    description:
      'the bearer token clients must send; given more than once, the daemon takes each, and each token is a tenant of its own',
  }),
  ...SERVER_BOUNDS,
  /** Expect HAProxy's PROXY protocol v2 header on every connection, so per-peer bounds and logs see the client's own address. Default false. */
  proxyProtocol: option(v.boolean(), {
    type: 'boolean',
    default: false,
    rule: 'a boolean',
    flag: 'proxy-protocol',
    flagHelp:
      "expect HAProxy's PROXY protocol v2 header on every connection: per-peer bounds and logs see the client's address",
    description:
      "every connection must open with HAProxy's PROXY protocol v2 header; per-peer bounds and the log use the client address it names (docs/fleet.md)",
  }),
  /** Names this daemon in the execution ids it gives out. Default `<hostname>:<port>`. */
  daemonId: option(
    v.custom<string>((value) => typeof value === 'string' && isValidDaemonId(value)),
    {
      type: 'string',
      defaultText: '`<hostname>:<port>`',
      rule: 'a non-empty name without "@", spaces or controls',
      flag: 'daemon-id',
      flagHelp: 'names this daemon in retained execution ids',
      description: 'names this daemon in retained execution ids',
    },
  ),
  /** The health and metrics listener (`/healthz`, `/readyz`, `/metrics`). Default: none. */
  admin: optionalGroup(ADMIN_SCHEMA, {
    type: 'object',
    rule: 'an object { host?, port }',
    description: 'the health and metrics listener (`/healthz`, `/readyz`, `/metrics`)',
  }),
  /** The version `protocolVersion()` announces. For tests of the mismatch path only. */
  protocolVersion: option(v.number(), {
    type: 'integer',
    rule: 'a number',
    description: 'for tests of the version mismatch only',
  }),
  /** Told one message per event (connections, executions, refusals). Default: nothing. */
  log: option(functionValue<LogSink>(), {
    type: 'function',
    rule: 'a function',
    description: 'told one message per event',
  }),
});

/**
 * The command line's own flags, beside those of `createExecutorServer`'s options: the admin
 * listener's (`admin.port`, `admin.host`, its options' rows) and the daemon process's (`run-daemon.ts`).
 */
export const DAEMON_ROWS = {
  'admin.port': ADMIN_SCHEMA.options.port.row,
  'admin.host': ADMIN_SCHEMA.options.host.row,
  logFormat: {
    type: 'choice',
    default: DEFAULT_LOG_FORMAT,
    rule: LOG_FORMATS.join(' or '),
    flag: 'log-format',
    flagHelp: 'log lines as timestamped text or JSON',
    description: 'timestamped text lines, or one JSON object per line',
  },
  detached: {
    type: 'boolean',
    default: false,
    rule: 'a boolean',
    flag: 'detached',
    flagHelp: 'keep serving when the parent process exits',
    description: 'keep serving when the parent process exits (nohup and the like)',
  },
} as const satisfies Record<string, ServerOptionRow>;
