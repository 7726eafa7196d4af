/**
 * The option schema of `IsolateExecutor`: one row per option (src/protocol/option-schema.ts), with
 * its default, its bounds, its rule text, the daemon's flag that sets it and its description. The
 * constructor's checks (resolve.ts), the daemon's `--help` and command line (src/server/command/cli-args.ts,
 * through the `/isolate` entry) and the docs tables (scripts/option-tables.ts, checked by
 * test/isolate/host/options/option-docs.test.ts) all read it; the views below (defaults, rules) are
 * derived from it. `memoryBudgetMb`, `maxWorkers` and `maxStarting` default by the host (host-sizing.ts).
 */
import { DEFAULT_MAX_CODE_BYTES } from '../../../protocol/code-size.js';
import type { NumberBounds, OptionRow, OptionUnit } from '../../../protocol/option-schema.js';
import { optionRuleText } from '../../contract/texts.js';
import { TOOL_CALL_STALL_MS } from '../../contract/tool-call-stall.js';
import { CONFINEMENT_OPTIONS, type ConfinementOption } from '../confinement/detect.js';
import {
  DEFAULT_STARTING,
  defaultMaxStarting,
  defaultMaxWorkers,
  defaultMemoryBudgetMb,
  SMALLEST_MEMBER_MB,
} from './host-sizing.js';
import { MAX_TIMER_MS } from './max-timer.js';
import type { IsolateExecutorOptions, IsolateLimitOptions, IsolateLimits, IsolatePoolOptions } from './types.js';

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_TIMEOUT_MS = 300_000;
/**
 * A few seconds of CPU: a computation upstream still returns (its timer cannot fire mid-turn)
 * takes a second or so past its bound; an endless loop is killed once it spends this.
 */
export const DEFAULT_TURN_GRACE_MS = 3_000;
/** Confine where the host allows it (docs/security.md). */
export const DEFAULT_CONFINEMENT: ConfinementOption = 'auto';
/** Generous: on a loaded 2-core box a spawn that normally takes 40 ms can take seconds. */
export const STARTUP_TIMEOUT_MS = 20_000;

/** What a number option takes (option-schema.ts's bounds), and the daemon's flag that sets it, where one does. */
export interface NumberRule extends NumberBounds {
  readonly flag?: string;
}

/**
 * An option of IsolateExecutor. `flagHelp`: what its daemon flag does, in --help and docs/remote.md's
 * flag table; `hostDefault`: the default this host computes, which --help shows beside `defaultText`;
 * `role` (pool numbers): `limit` bounds what a program can use up (passing it fails the run or the
 * call, with a text that names it; docs/isolate.md's Limits table lists it, beside the timeouts and
 * every `limits.*` cap), `sizing` shapes the pool (passing it makes programs wait, or replaces a
 * process between runs, and fails nothing).
 */
export interface IsolateOptionRow extends OptionRow {
  readonly flagHelp?: string;
  readonly hostDefault?: () => number;
  readonly role?: 'limit' | 'sizing';
}

interface NumberRowParts {
  unit: OptionUnit;
  kind?: 'integer' | 'positive';
  min: number;
  max?: number;
  default?: number;
  defaultText?: string;
  flag?: string;
  flagHelp?: string;
  hostDefault?: () => number;
  role?: 'limit' | 'sizing';
  unitExempt?: string;
  description: string;
}

/** A number option's row: its rule text is its bounds', in the constructor's words. */
function numberRow<const Parts extends NumberRowParts>(
  parts: Parts,
): Omit<Parts, 'kind' | 'min' | 'max'> & IsolateOptionRow & { bounds: NumberBounds } {
  const { kind = 'integer', min, max, ...rest } = parts;
  const bounds: NumberBounds = max === undefined ? { kind, min } : { kind, min, max };
  const row = { type: kind === 'integer' ? 'integer' : 'number', bounds, rule: optionRuleText.number(bounds), ...rest };
  return row as Omit<Parts, 'kind' | 'min' | 'max'> & IsolateOptionRow & { bounds: NumberBounds };
}

const MIB = 2 ** 20;
/**
 * The largest result, tool argument, tool result and log text: each crosses workerd's RPC inside
 * the pool member, which refuses a value over 32 MiB; this leaves room for its framing.
 */
const MAX_RPC_PAYLOAD_BYTES = 30 * MIB;
const REQUEST_FIELD = 'the field of ExecuteRequest whose default it sets, named as upstream names it';

/** The top-level options, in the order a refusal lists them (the daemon's Sandbox flags among them). */
export const TOP_ROWS = {
  timeout: numberRow({
    unit: 'ms',
    unitExempt: REQUEST_FIELD,
    kind: 'positive',
    min: 0,
    default: DEFAULT_TIMEOUT_MS,
    flag: 'timeout',
    flagHelp: 'bound of a request that sets no timeout',
    description: 'the bound, in ms, of a request that leaves `timeout` undefined (upstream 0.4.2+)',
  }),
  maxTimeout: numberRow({
    unit: 'ms',
    unitExempt: REQUEST_FIELD,
    kind: 'positive',
    min: 0,
    defaultText: `\`max(${DEFAULT_MAX_TIMEOUT_MS}, timeout)\``,
    flag: 'max-timeout',
    flagHelp: 'bound a `null` timeout asks for, and the largest allowed',
    description: 'the bound of a `null` timeout, and the largest bound a request may ask for',
  }),
  cpuTimeout: numberRow({
    unit: 'ms',
    unitExempt: REQUEST_FIELD,
    kind: 'positive',
    min: 0,
    defaultText: 'none',
    flag: 'cpu-timeout',
    flagHelp: 'CPU time a request that sets no `cpuTimeout` may spend',
    description:
      'the CPU time, in ms, a request that leaves `cpuTimeout` undefined may spend (see [The CPU-time bound](#the-cpu-time-bound))',
  }),
  turnGraceMs: numberRow({
    unit: 'ms',
    min: 0,
    max: MAX_TIMER_MS,
    default: DEFAULT_TURN_GRACE_MS,
    flag: 'turn-grace-ms',
    flagHelp: 'CPU time a turn still running at the bound may spend to finish, before its process is killed',
    description:
      "the CPU time, in ms, a turn of the program still running when its `timeout` passes may spend to finish: what it settles then is the result, as upstream's timer cannot fire mid-turn; past it the process is killed and the run times out (at least 200 ms; see [A turn runs to its end](#a-turn-runs-to-its-end))",
  }),
  outbound: {
    type: 'function',
    default: null,
    defaultText: '`null` (blocked)',
    rule: optionRuleText.outbound,
    description: 'the outbound of a request that leaves it undefined',
  },
  pool: { type: 'object', rule: optionRuleText.group, description: 'the pool options below (`pool.*`)' },
  limits: { type: 'object', rule: optionRuleText.group, description: 'the size caps below (`limits.*`)' },
  confinement: {
    type: 'choice',
    default: DEFAULT_CONFINEMENT,
    rule: optionRuleText.oneOf(CONFINEMENT_OPTIONS.map((mode) => `'${mode}'`)),
    flag: 'confinement',
    flagHelp: 'confine each workerd by the OS where the host allows it, refuse to start where it does not, or never',
    description:
      "each workerd confined by the OS: `'auto'` where the host allows it, `'required'` or refuse to construct, `'off'` never ([Confinement](#confinement))",
  },
} as const satisfies Record<keyof IsolateExecutorOptions, IsolateOptionRow>;

/** The pool's options, in the order `IsolatePoolOptions` declares them, as --help and a refusal list them. */
export const POOL_ROWS = {
  maxWorkers: numberRow({
    unit: 'count',
    min: 1,
    defaultText: `what the memory budget holds at ${SMALLEST_MEMBER_MB} MB a process, within the open-file limit`,
    hostDefault: () => defaultMaxWorkers(),
    flag: 'max-workers',
    role: 'sizing',
    flagHelp:
      'processes running executions at once, an upper bound: the pool grows on demand within `--memory-budget-mb`',
    description:
      'processes running executions at once (one execution per process), an upper bound: the pool grows on demand within `pool.memoryBudgetMb` ([Sizing](#sizing-a-pool-for-an-agent-host))',
  }),
  minWorkers: numberRow({
    unit: 'count',
    min: 0,
    default: 0,
    flag: 'min-workers',
    role: 'sizing',
    flagHelp: 'processes kept even when idle',
    description: 'processes kept even when idle; the pool never reaps below it',
  }),
  spare: numberRow({
    unit: 'count',
    min: 0,
    default: 1,
    flag: 'spare',
    role: 'sizing',
    flagHelp: 'warm processes kept ready beyond the busy ones',
    description: 'warm idle processes kept ready beyond the busy ones',
  }),
  idleTimeoutMs: numberRow({
    unit: 'ms',
    min: 0,
    default: 30_000,
    flag: 'idle-timeout-ms',
    role: 'sizing',
    flagHelp: 'end a process idle this long, beyond `--min-workers` and the spares',
    description: 'an idle process beyond `minWorkers` and the spares is ended after this long',
  }),
  maxStarting: numberRow({
    unit: 'count',
    min: 1,
    defaultText: `${DEFAULT_STARTING.perCore} times the CPU count, ${DEFAULT_STARTING.least} to ${DEFAULT_STARTING.most}`,
    hostDefault: defaultMaxStarting,
    flag: 'max-starting',
    role: 'sizing',
    flagHelp: 'processes starting at once',
    description: 'processes starting at once, so a burst does not spend every core on spawning',
  }),
  maxQueue: numberRow({
    unit: 'count',
    min: 0,
    default: 5_000,
    flag: 'max-queue',
    role: 'limit',
    flagHelp: 'executions waiting beyond `--max-workers` before `QUEUE_FULL`',
    description: 'executions that may wait beyond `maxWorkers` (for a process to free up), before `QUEUE_FULL`',
  }),
  recycleAfterRuns: numberRow({
    unit: 'count',
    min: 1,
    default: 200,
    flag: 'recycle-after-runs',
    role: 'sizing',
    flagHelp: 'replace a process after this many runs',
    description: 'a process is replaced after this many runs',
  }),
  maxRssMb: numberRow({
    unit: 'mb',
    kind: 'positive',
    min: 0,
    default: 512,
    flag: 'max-rss-mb',
    role: 'sizing',
    flagHelp: 'replace a process past this resident set size',
    description: 'a process is replaced once its resident set passes this (checked after each run)',
  }),
  heapLimitMb: numberRow({
    unit: 'mb',
    min: 16,
    default: 256,
    flag: 'heap-limit-mb',
    role: 'limit',
    flagHelp: 'V8 heap cap of every sandbox isolate',
    description: "V8 heap cap of every isolate (`--max-old-space-size`, in the config's `v8Flags`)",
  }),
  memoryLimitMb: numberRow({
    unit: 'mb',
    min: 64,
    default: 512,
    flag: 'memory-limit-mb',
    role: 'limit',
    flagHelp: 'memory cap of one execution: heap, buffers and WebAssembly memory together',
    description:
      "memory cap of one execution: its process's resident set (heap, ArrayBuffers, WebAssembly memory), enforced during the run (see [Limits](#limits))",
  }),
  memoryBudgetMb: numberRow({
    unit: 'mb',
    // Below one member's private memory and the binary's shared pages, the pool holds one member alone.
    min: 16,
    defaultText: "half of the host's memory (its cgroup v2 `memory.max` where one is set, else the machine's)",
    hostDefault: () => defaultMemoryBudgetMb(),
    flag: 'memory-budget-mb',
    role: 'limit',
    flagHelp: 'memory the processes may use together, as measured; beyond it executions wait',
    description:
      'the memory the members may use together, as measured; the pool starts no member beyond it, so programs wait, and ends the member holding the most when members grow past it ([Sizing](#sizing-a-pool-for-an-agent-host)); at least 16',
  }),
  cgroup: {
    type: 'string',
    defaultText: 'none',
    rule: optionRuleText.cgroupPath,
    flag: 'cgroup',
    flagHelp:
      'a cgroup v2 directory delegated to the daemon; each process runs in a child of it capped at `--memory-limit-mb`',
    description:
      'an absolute path of a cgroup v2 directory delegated to the executor; each member then runs in a child cgroup of it whose `memory.max` is `pool.memoryLimitMb`',
  },
  maxRetained: numberRow({
    unit: 'count',
    min: 0,
    default: 64,
    role: 'limit',
    description:
      'retained executions (`retainHandles`) held at once, each in a process of its own; one more is refused with `LIMIT_EXCEEDED` ([Retained handles](#retained-handles))',
  }),
  retainedIdleTimeoutMs: numberRow({
    unit: 'ms',
    // A Node timer closes it, so no longer than the longest delay a timer takes.
    min: 1,
    max: MAX_TIMER_MS,
    default: 300_000,
    role: 'limit',
    description: 'a retained execution no call has used for this long is closed, and its process ends',
  }),
  programStartTimeoutMs: numberRow({
    unit: 'ms',
    min: 1,
    max: MAX_TIMER_MS,
    default: 10_000,
    flag: 'program-start-timeout-ms',
    role: 'limit',
    flagHelp: "a run's program must start within this long of its hand-off to a process; its timeout counts from then",
    description:
      "a run's program must start (its worker loaded in the process it was handed to) within this long, or the run ends and its process is ended; a process that spent CPU time in that period (loading slowly, or a first turn that spins) gets another, its run clock counting that CPU time; the run's `timeout` counts from the program's start, so a loaded process's slow start is not the program's",
  }),
  runsPerMember: numberRow({
    unit: 'count',
    min: 1,
    max: 64,
    default: 1,
    flag: 'runs-per-member',
    role: 'sizing',
    flagHelp: 'executions of one tenant a process runs at once, each in its own isolate (1: one execution per process)',
    description:
      "executions of the same tenant (a request's `tenant`, the daemon's token) one process runs at once, each in a fresh isolate, as Cloudflare runs a tenant's workers; executions of different tenants, or with no tenant, never share a process. Above 1, a spin, a crash or an out-of-memory in one execution can end the others in its process, and `memoryLimitMb` caps the process, not the execution ([The tenant level](#the-tenant-level))",
  }),
  maxNestedRuns: numberRow({
    unit: 'count',
    min: 0,
    default: 16,
    role: 'limit',
    description:
      'runs admitted beyond `maxWorkers` because a tool call of a running execution started them ([Nested runs](#nested-runs)); one more is refused with `LIMIT_EXCEEDED`',
  }),
} as const satisfies Record<keyof IsolatePoolOptions, IsolateOptionRow>;

/** A size cap's row: an integer from 1 to its maximum. */
function capRow<const Flag extends string>(
  unit: OptionUnit,
  max: number,
  fallback: number,
  flag: Flag,
  flagHelp: string,
  description: string,
) {
  return numberRow({ unit, min: 1, max, default: fallback, flag, flagHelp, description });
}

/** The size caps, in the order `IsolateLimitOptions` declares them, as --help and a refusal list them. */
export const LIMIT_ROWS = {
  maxCodeBytes: capRow(
    'bytes',
    // The code goes into the start message, which maxRequestBytes bounds.
    MAX_RPC_PAYLOAD_BYTES,
    DEFAULT_MAX_CODE_BYTES,
    'max-code-bytes',
    "a request's code, checked before anything reads it",
    "a request's code (UTF-8), checked before anything reads it (at most 30 MiB)",
  ),
  maxRequestBytes: capRow(
    'bytes',
    MAX_RPC_PAYLOAD_BYTES,
    16 * MIB,
    'max-request-bytes',
    'code and modules, or `invokeHandle` arguments',
    "what one request sends into the sandbox: its code and modules, or `invokeHandle`'s arguments (at most 30 MiB)",
  ),
  maxResultBytes: capRow(
    'bytes',
    MAX_RPC_PAYLOAD_BYTES,
    16 * MIB,
    'max-result-bytes',
    'the result, encoded',
    "the settled value, in its encoded form (at most 30 MiB: it crosses workerd's RPC inside the member)",
  ),
  maxToolArgsBytes: capRow(
    'bytes',
    MAX_RPC_PAYLOAD_BYTES,
    16 * MIB,
    'max-tool-args-bytes',
    "one tool call's arguments",
    "one tool call's arguments, as JSON (at most 30 MiB: workerd's RPC carries them)",
  ),
  maxToolResultBytes: capRow(
    'bytes',
    MAX_RPC_PAYLOAD_BYTES,
    16 * MIB,
    'max-tool-result-bytes',
    "one tool call's result",
    "one tool call's result envelope, as JSON (at most 30 MiB)",
  ),
  maxConcurrentToolCalls: capRow(
    'count',
    10_000,
    256,
    'max-concurrent-tool-calls',
    'tool calls one execution may have waiting on the host while they answer',
    `tool calls one execution may have waiting on the host at once while they answer; later calls wait in the sandbox until earlier ones answer, and when none has answered for ${TOOL_CALL_STALL_MS} ms the bound opens by as many again, so calls that wait on a later call never deadlock`,
  ),
  maxConcurrentToolArgsBytes: capRow(
    'bytes',
    1024 * MIB,
    32 * MIB,
    'max-concurrent-tool-args-bytes',
    'the arguments of those calls together',
    'the arguments (JSON) of the tool calls one execution has waiting on the host, together; later calls wait in the sandbox until earlier ones answer',
  ),
  maxLogLines: capRow(
    'count',
    10_000_000,
    10_000,
    'max-log-lines',
    'console lines kept',
    'captured console lines per run',
  ),
  maxLogBytes: capRow(
    'bytes',
    MAX_RPC_PAYLOAD_BYTES,
    4 * MIB,
    'max-log-bytes',
    'console text kept',
    'captured console text per run (UTF-8)',
  ),
  maxRequestBodyBytes: capRow(
    'bytes',
    1024 * MIB,
    32 * MIB,
    'max-request-body-bytes',
    "one outbound fetch's request body",
    'the body of one outbound request a sandbox `fetch` sends',
  ),
  maxResponseBodyBytes: capRow(
    'bytes',
    1024 * MIB,
    32 * MIB,
    'max-response-body-bytes',
    "one outbound fetch's response body",
    'the body of one outbound response a sandbox `fetch` receives',
  ),
  maxConcurrentFetches: capRow(
    'count',
    // Each fetch in flight holds a descriptor of the member, whose confined limit is 1024.
    900,
    256,
    'max-concurrent-fetches',
    'fetches one run may have in flight at once',
    'sandbox fetches one run may have in flight at once (at most 900: each holds a descriptor of the member)',
  ),
  maxProcessOutputBytes: capRow(
    'bytes',
    1024 * MIB,
    MIB,
    'max-process-output-bytes',
    "what a run's process may write to its stdout and stderr",
    "what a run's process may write to its stdout and stderr: workerd's own lines (the console methods not captured as logs are dropped in the sandbox, as upstream leaves them out of its logs)",
  ),
} as const satisfies Record<keyof IsolateLimitOptions, IsolateOptionRow>;

/**
 * Every option's row by group: what the daemon's command line (through the `/isolate` entry) and
 * the docs tables are derived from.
 */
export const ISOLATE_OPTION_ROWS = { top: TOP_ROWS, pool: POOL_ROWS, limits: LIMIT_ROWS } as const;

// --- views derived from the rows --------------------------------------------------------------

type NumberRowsOf<Rows> = { [K in keyof Rows as Rows[K] extends { bounds: NumberBounds } ? K : never]: Rows[K] };
type RuleOf<Row> = Row extends { bounds: infer Bounds; flag: infer Flag }
  ? Bounds & { flag: Flag }
  : Row extends { bounds: infer Bounds }
    ? Bounds
    : never;
type RulesOf<Rows> = { readonly [K in keyof NumberRowsOf<Rows>]: RuleOf<Rows[K]> };

function rulesOf<Rows extends Record<string, IsolateOptionRow>>(rows: Rows): RulesOf<Rows> {
  const rules: Record<string, NumberRule> = {};
  for (const [name, row] of Object.entries(rows)) {
    if (row.bounds !== undefined) rules[name] = row.flag === undefined ? row.bounds : { ...row.bounds, flag: row.flag };
  }
  return rules as RulesOf<Rows>;
}

type DefaultsOf<Rows> = {
  readonly [K in keyof Rows as Rows[K] extends { bounds: NumberBounds; default: number } ? K : never]: number;
};

function defaultsOf<Rows extends Record<string, IsolateOptionRow>>(rows: Rows): DefaultsOf<Rows> {
  const defaults: Record<string, number> = {};
  for (const [name, row] of Object.entries(rows)) if (typeof row.default === 'number') defaults[name] = row.default;
  return Object.freeze(defaults) as DefaultsOf<Rows>;
}

/** The top-level number options' rules. */
export const TOP_NUMBERS = rulesOf({
  timeout: TOP_ROWS.timeout,
  maxTimeout: TOP_ROWS.maxTimeout,
  cpuTimeout: TOP_ROWS.cpuTimeout,
  turnGraceMs: TOP_ROWS.turnGraceMs,
});
/** The pool's number options' rules, in the order the daemon's --help lists those with a flag. */
export const POOL_NUMBERS = rulesOf(POOL_ROWS);
/** Each size cap's rule: an integer from 1 to its maximum, and its daemon flag. */
export const LIMIT_NUMBERS = rulesOf(LIMIT_ROWS);

/** What each pool number option does (`IsolateOptionRow.role`). */
export const POOL_NUMBER_ROLES = Object.fromEntries(
  Object.entries(POOL_ROWS).flatMap(([name, row]) => ('role' in row ? [[name, row.role]] : [])),
) as Record<keyof typeof POOL_NUMBERS, 'limit' | 'sizing'>;

/** The pool options whose defaults are plain numbers (`memoryBudgetMb`, `maxWorkers` and `maxStarting` depend on the host). */
export const DEFAULT_POOL = defaultsOf(POOL_ROWS);
export const DEFAULT_LIMITS: Readonly<IsolateLimits> = defaultsOf(LIMIT_ROWS);
/** The largest value each size cap takes. */
export const LIMIT_MAXIMA: Readonly<IsolateLimits> = Object.freeze(
  Object.fromEntries(Object.entries(LIMIT_ROWS).map(([name, row]) => [name, row.bounds.max])) as IsolateLimits,
);

/** The pool's string option: `pool.cgroup`, and its daemon flag. */
export const CGROUP_FLAG = POOL_ROWS.cgroup.flag;
