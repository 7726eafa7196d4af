/**
 * The construction options of `IsolateExecutor`: their defaults, and the checks that name the
 * option a value broke. Also the timeout grammar every request shares.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { DEFAULT_MAX_CODE_BYTES } from '../protocol/code-size.js';
import { describeValue } from '../protocol/describe-value.js';
import { ExecutorError } from '../protocol/errors.js';
import type { OutboundFetch } from '../protocol/types.js';
import { CONFINEMENT_OPTIONS, type ConfinementOption } from './confinement/detect.js';
import { isolateText } from './texts.js';

export interface IsolatePoolOptions {
  /**
   * workerd processes running executions at once (one execution per process); the pool grows to
   * it on demand. Default: sized by the host's memory (`defaultMaxWorkers`, docs/isolate.md).
   */
  maxWorkers?: number | undefined;
  /** Processes kept even when idle; the pool never reaps below it. Default 0. */
  minWorkers?: number | undefined;
  /** Warm processes kept ready beyond the busy ones, so a kill or a recycle never waits for a spawn. Default 1. */
  spare?: number | undefined;
  /** An idle process beyond `minWorkers` and the spares is ended after this many ms. Default 30000. */
  idleTimeoutMs?: number | undefined;
  /** Processes starting at once, so a burst does not spend every core on spawning. Default: twice the CPU count, 2 to 8. */
  maxStarting?: number | undefined;
  /** Executions allowed to wait for a process beyond `maxWorkers` before `QUEUE_FULL`. Default 5000. */
  maxQueue?: number | undefined;
  /** A process is replaced after this many runs. Default 200. */
  recycleAfterRuns?: number | undefined;
  /** A process is replaced once its resident set passes this many MB (checked after each run). Default 512. */
  maxRssMb?: number | undefined;
  /** V8 heap cap of every sandbox isolate (`--max-old-space-size`), in MB. Default 256. */
  heapLimitMb?: number | undefined;
  /**
   * Memory cap of one execution, in MB: everything its process holds (heap, ArrayBuffers,
   * WebAssembly memory), enforced during the run. Default 512.
   */
  memoryLimitMb?: number | undefined;
  /**
   * A cgroup v2 directory delegated to this executor (for example a systemd unit's, with
   * `Delegate=yes`). When set, every member runs in a child cgroup of it whose `memory.max` is
   * `memoryLimitMb`, so the kernel enforces the cap. Default: none (a watchdog enforces it).
   */
  cgroup?: string | undefined;
}

/** The size caps of one execution. Every size is in bytes (UTF-8 for text). */
export interface IsolateLimitOptions {
  /** A request's code, checked before anything reads it (UTF-8). Default 1 MiB. */
  maxCodeBytes?: number | undefined;
  /** What a request sends into the sandbox: its code and modules, or invokeHandle's arguments. Default 16 MiB. */
  maxRequestBytes?: number | undefined;
  /** The settled value, in its encoded form. Default 16 MiB. */
  maxResultBytes?: number | undefined;
  /** One tool call's arguments, as JSON. Default 16 MiB. */
  maxToolArgsBytes?: number | undefined;
  /** One tool call's result envelope, as JSON. Default 16 MiB. */
  maxToolResultBytes?: number | undefined;
  /** Tool calls one execution may have waiting on the host at once; one more fails at once. Default 256. */
  maxConcurrentToolCalls?: number | undefined;
  /** The arguments (JSON) of the tool calls one execution has waiting on the host, together. Default 32 MiB. */
  maxConcurrentToolArgsBytes?: number | undefined;
  /** Captured console lines; past this a marker line says the logs were cut. Default 10000. */
  maxLogLines?: number | undefined;
  /** Captured console text; past this a marker line says the logs were cut. Default 4 MiB. */
  maxLogBytes?: number | undefined;
  /** The body of one outbound request a sandbox `fetch` sends. Default 32 MiB. */
  maxRequestBodyBytes?: number | undefined;
  /** The body of one outbound response a sandbox `fetch` receives. Default 32 MiB. */
  maxResponseBodyBytes?: number | undefined;
  /** Sandbox fetches one run may have in flight at once; one more fails at once. Default 256. */
  maxConcurrentFetches?: number | undefined;
  /**
   * What a run's process may write to its stdout and stderr (`console.info`, `console.debug`…,
   * which are not captured as logs); past it the run ends and the process is killed. Default 1 MiB.
   */
  maxProcessOutputBytes?: number | undefined;
}

export interface IsolateExecutorOptions {
  /** The bound of a request that leaves `timeout` undefined, in ms. Default 60000, as upstream 0.4.2+. */
  timeout?: number | undefined;
  /** The bound a `null` timeout asks for, and the largest one a request may ask for. Default max(300000, timeout). */
  maxTimeout?: number | undefined;
  /**
   * The CPU time, in ms, a request that leaves `cpuTimeout` undefined may spend: its process's own
   * CPU time, beside the wall-clock `timeout`. Default: none (only the wall clock bounds a run).
   */
  cpuTimeout?: number | undefined;
  /** The outbound of a request that leaves it undefined. Default `null`: blocked. */
  outbound?: OutboundFetch | null | undefined;
  pool?: IsolatePoolOptions | undefined;
  /**
   * Whether each workerd runs confined by the OS (namespaces, a filesystem view, an unprivileged
   * uid, rlimits, a seccomp filter; see docs/security.md). 'auto' (the default) confines where this
   * host allows it; 'required' refuses to construct where it does not; 'off' never confines.
   */
  confinement?: ConfinementOption | undefined;
  limits?: IsolateLimitOptions | undefined;
}

/** The resolved size caps. */
export type IsolateLimits = Required<{ [K in keyof IsolateLimitOptions]: number }>;

export interface IsolateSettings {
  timeout: number;
  maxTimeout: number;
  /** The CPU-time bound of a request that sets none; `null`: none. */
  cpuTimeout: number | null;
  outbound: OutboundFetch | null;
  maxWorkers: number;
  minWorkers: number;
  spare: number;
  idleTimeoutMs: number;
  maxStarting: number;
  maxQueue: number;
  recycleAfterRuns: number;
  maxRssMb: number;
  heapLimitMb: number;
  memoryLimitMb: number;
  cgroup: string | null;
  limits: IsolateLimits;
  startupTimeoutMs: number;
  confinement: ConfinementOption;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_TIMEOUT_MS = 300_000;
/** Generous: on a loaded 2-core box a spawn that normally takes 40 ms can take seconds. */
const STARTUP_TIMEOUT_MS = 20_000;

/** The pool options whose defaults are plain numbers (`maxWorkers` and `maxStarting` depend on the host). */
export const DEFAULT_POOL = Object.freeze({
  minWorkers: 0,
  spare: 1,
  idleTimeoutMs: 30_000,
  maxQueue: 5_000,
  recycleAfterRuns: 200,
  maxRssMb: 512,
  heapLimitMb: 256,
  memoryLimitMb: 512,
});

/**
 * What one member costs the host's memory while it serves programs, for sizing: measured, a fresh
 * member is about 10 MB of proportional set (PSS) beside the binary's pages all members share, and
 * one that has served `recycleAfterRuns` (200) runs about 40 MB (docs/isolate.md).
 */
const MEMBER_MEMORY_MB = 64;
/** File descriptors the host holds per member (measured: 6), with room to spare. */
const HOST_FDS_PER_MEMBER = 8;
/** File descriptors left to the host's own sockets and files when sizing by them. */
const HOST_FDS_RESERVED = 256;

/** The host's memory in MB: the machine's, or less where the process is constrained (a cgroup). */
function hostMemoryMb(): number {
  const constrained = process.constrainedMemory?.() ?? 0;
  const total = totalmem();
  return (constrained > 0 && constrained < total ? constrained : total) / 2 ** 20;
}

/** The soft limit of open files, where Linux reports it (Node raises it to the hard limit at start). */
function openFilesLimit(): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** What the default of `pool.maxWorkers` is computed from. */
export interface HostCapacity {
  memoryMb: number;
  cores: number;
  /** The open-file limit, where known. */
  openFiles: number | undefined;
}

/**
 * The rule behind the default of `pool.maxWorkers`: half of the host's memory for the pool, of
 * which room for one member per core at `memoryLimitMb` (only a running member can grow, and at
 * most one per core runs at any moment), and the rest at MEMBER_MEMORY_MB per member. At least
 * 1, and no more than the host's open-file limit can serve. 176 on a 24 GiB, 2-core host with
 * the default cap of 512 MB.
 */
export function maxWorkersFor(host: HostCapacity, memoryLimitMb: number): number {
  const budgetMb = host.memoryMb / 2 - host.cores * memoryLimitMb;
  const byMemory = Math.floor(budgetMb / MEMBER_MEMORY_MB);
  const byFiles =
    host.openFiles === undefined ? byMemory : Math.floor((host.openFiles - HOST_FDS_RESERVED) / HOST_FDS_PER_MEMBER);
  return Math.max(1, Math.min(byMemory, byFiles));
}

/** The default of `pool.maxWorkers` on this host (`maxWorkersFor`). */
export function defaultMaxWorkers(memoryLimitMb: number = DEFAULT_POOL.memoryLimitMb): number {
  return maxWorkersFor(
    { memoryMb: hostMemoryMb(), cores: availableParallelism(), openFiles: openFilesLimit() },
    memoryLimitMb,
  );
}

/**
 * The default of `pool.maxStarting`: two spawns per core (part of a spawn waits on the kernel),
 * from 2 to 8 at once. Measured on 2 cores, a cold burst of 100 programs finished sooner with 4
 * than with 1, 2 or no limit at all (the last made every program wait for all the spawns).
 */
export function defaultMaxStarting(): number {
  return Math.max(2, Math.min(8, 2 * availableParallelism()));
}

const MIB = 2 ** 20;
export const DEFAULT_LIMITS: Readonly<IsolateLimits> = Object.freeze({
  maxCodeBytes: DEFAULT_MAX_CODE_BYTES,
  maxRequestBytes: 16 * MIB,
  maxResultBytes: 16 * MIB,
  maxToolArgsBytes: 16 * MIB,
  maxToolResultBytes: 16 * MIB,
  maxConcurrentToolCalls: 256,
  maxConcurrentToolArgsBytes: 32 * MIB,
  maxLogLines: 10_000,
  maxLogBytes: 4 * MIB,
  maxRequestBodyBytes: 32 * MIB,
  maxResponseBodyBytes: 32 * MIB,
  maxConcurrentFetches: 256,
  maxProcessOutputBytes: MIB,
});
/**
 * The largest result, tool argument, tool result and log text: each crosses workerd's RPC inside
 * the pool member, which refuses a value over 32 MiB; this leaves room for its framing.
 */
const MAX_RPC_PAYLOAD_BYTES = 30 * MIB;
/** The largest value each size cap takes. */
export const LIMIT_MAXIMA: Readonly<IsolateLimits> = Object.freeze({
  // The code goes into the start message, which maxRequestBytes bounds.
  maxCodeBytes: MAX_RPC_PAYLOAD_BYTES,
  maxRequestBytes: MAX_RPC_PAYLOAD_BYTES,
  maxResultBytes: MAX_RPC_PAYLOAD_BYTES,
  maxToolArgsBytes: MAX_RPC_PAYLOAD_BYTES,
  maxToolResultBytes: MAX_RPC_PAYLOAD_BYTES,
  maxConcurrentToolCalls: 10_000,
  maxConcurrentToolArgsBytes: 1024 * MIB,
  maxLogLines: 10_000_000,
  maxLogBytes: MAX_RPC_PAYLOAD_BYTES,
  maxRequestBodyBytes: 1024 * MIB,
  maxResponseBodyBytes: 1024 * MIB,
  // Each fetch in flight holds a descriptor of the member, whose confined limit is 1024.
  maxConcurrentFetches: 900,
  maxProcessOutputBytes: 1024 * MIB,
});

/** workerd's limit on one value crossing its RPC. */
const WORKERD_RPC_LIMIT_BYTES = 32 * MIB;
/**
 * The largest outcome frame (`done`, `cancelled`) as it crosses workerd's RPC inside the member:
 * the run's context hands it to the socket's as one string, which V8 serializes at a byte a
 * UTF-16 unit when every unit is below 0x100, else at two. Room is left for the serialization's
 * own header. An outcome over it fails with a text naming it beside the frame cap.
 */
export const MAX_OUTCOME_RPC_BYTES = WORKERD_RPC_LIMIT_BYTES - 64 * 1024;

/** What one captured line adds to a frame beside its text: `{"level":"error","message":""},`. */
const LOG_LINE_FRAME_BYTES = 32;
/** Room in a frame for everything besides its payload: the ids, the names, the logs' marker line. */
const FRAME_SLACK_BYTES = 2 * MIB;

/**
 * The largest frame a supervisor sends the host (channel.ts), from the caps: the host's socket
 * reads no more, and the supervisor sends none larger (one it would is refused there, with a text
 * naming the caps). Each frame kind:
 * - `call`: the arguments' JSON text inside a JSON string, where each `"` and `\` doubles (JSON
 *   text holds nothing else JSON escapes), so twice `maxToolArgsBytes`;
 * - `done`: the value as JSON, as measured against `maxResultBytes` (a thrown value's text or a
 *   fault in its place), and the logs, whose text may escape to six bytes a byte (`\u0001`);
 * - `cancelled`: the logs alone.
 */
export function maxSupervisorFrameBytes(limits: IsolateLimits): number {
  const call = 2 * limits.maxToolArgsBytes;
  const logs = 6 * limits.maxLogBytes + LOG_LINE_FRAME_BYTES * (limits.maxLogLines + 1);
  return Math.max(call, limits.maxResultBytes + logs) + FRAME_SLACK_BYTES;
}

const TOP_LEVEL = ['timeout', 'maxTimeout', 'cpuTimeout', 'outbound', 'pool', 'limits', 'confinement'] as const;
const POOL_LEVEL = [
  'maxWorkers',
  'minWorkers',
  'spare',
  'idleTimeoutMs',
  'maxStarting',
  'maxQueue',
  'recycleAfterRuns',
  'maxRssMb',
  'heapLimitMb',
  'memoryLimitMb',
  'cgroup',
] as const;
const LIMITS_LEVEL = Object.keys(DEFAULT_LIMITS) as (keyof IsolateLimits)[];

function invalid(message: string): ExecutorError {
  return new ExecutorError('INVALID_REQUEST', message);
}

function rejectUnknown(record: object, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      throw invalid(isolateText.optionUnknown(`${prefix}${key}`, known.map((name) => `${prefix}${name}`).join(', ')));
    }
  }
}

function integer(option: string, value: unknown, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw invalid(isolateText.optionInvalid(option, `an integer >= ${min}`, describeValue(value)));
  }
  return value;
}

function bounded(option: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(isolateText.optionInvalid(option, `an integer from ${min} to ${max}`, describeValue(value)));
  }
  return value;
}

function groupOf(option: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(isolateText.optionInvalid(option, 'an object', describeValue(value)));
  }
  return { ...value };
}

function cgroupPath(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !value.startsWith('/') || value.includes('\0')) {
    throw invalid(
      isolateText.optionInvalid('pool.cgroup', 'an absolute path of a cgroup v2 directory', describeValue(value)),
    );
  }
  return value;
}

function resolveLimits(value: unknown): IsolateLimits {
  const limits = groupOf('limits', value);
  rejectUnknown(limits, LIMITS_LEVEL, 'limits.');
  const cap = (name: keyof IsolateLimits) =>
    bounded(`limits.${name}`, limits[name], 1, LIMIT_MAXIMA[name], DEFAULT_LIMITS[name]);
  return {
    maxCodeBytes: cap('maxCodeBytes'),
    maxRequestBytes: cap('maxRequestBytes'),
    maxResultBytes: cap('maxResultBytes'),
    maxToolArgsBytes: cap('maxToolArgsBytes'),
    maxToolResultBytes: cap('maxToolResultBytes'),
    maxConcurrentToolCalls: cap('maxConcurrentToolCalls'),
    maxConcurrentToolArgsBytes: cap('maxConcurrentToolArgsBytes'),
    maxLogLines: cap('maxLogLines'),
    maxLogBytes: cap('maxLogBytes'),
    maxRequestBodyBytes: cap('maxRequestBodyBytes'),
    maxResponseBodyBytes: cap('maxResponseBodyBytes'),
    maxConcurrentFetches: cap('maxConcurrentFetches'),
    maxProcessOutputBytes: cap('maxProcessOutputBytes'),
  };
}

function positive(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(isolateText.optionInvalid(option, 'a positive finite number', describeValue(value)));
  }
  return value;
}

export function resolveSettings(options: unknown): IsolateSettings {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(isolateText.optionsNotObject(describeValue(options)));
  }
  const top = options as IsolateExecutorOptions;
  rejectUnknown(top, TOP_LEVEL, '');
  const timeout = positive('timeout', top.timeout, DEFAULT_TIMEOUT_MS);
  const maxTimeout = positive('maxTimeout', top.maxTimeout, Math.max(DEFAULT_MAX_TIMEOUT_MS, timeout));
  if (timeout > maxTimeout) throw invalid(isolateText.optionTimeoutAboveMax(timeout, maxTimeout));
  const outbound = top.outbound;
  if (outbound !== undefined && outbound !== null && typeof outbound !== 'function') {
    throw invalid(
      isolateText.optionInvalid(
        'outbound',
        'a function (Request) => Response, null or undefined',
        describeValue(outbound),
      ),
    );
  }
  const cpuTimeout = top.cpuTimeout === undefined ? null : positive('cpuTimeout', top.cpuTimeout, 0);
  const pool: IsolatePoolOptions = groupOf('pool', top.pool);
  rejectUnknown(pool, POOL_LEVEL, 'pool.');
  const memoryLimitMb = integer('pool.memoryLimitMb', pool.memoryLimitMb, 64, DEFAULT_POOL.memoryLimitMb);
  const maxWorkers = integer('pool.maxWorkers', pool.maxWorkers, 1, defaultMaxWorkers(memoryLimitMb));
  const minWorkers = integer('pool.minWorkers', pool.minWorkers, 0, DEFAULT_POOL.minWorkers);
  if (minWorkers > maxWorkers) throw invalid(isolateText.optionMinAboveMax(minWorkers, maxWorkers));
  const confinement = top.confinement ?? 'auto';
  if (!(CONFINEMENT_OPTIONS as readonly unknown[]).includes(confinement)) {
    const valid = CONFINEMENT_OPTIONS.map((mode) => `'${mode}'`).join(', ');
    throw invalid(isolateText.optionInvalid('confinement', `one of ${valid}`, describeValue(confinement)));
  }
  return {
    timeout,
    maxTimeout,
    cpuTimeout,
    outbound: outbound ?? null,
    maxWorkers,
    minWorkers,
    spare: integer('pool.spare', pool.spare, 0, DEFAULT_POOL.spare),
    idleTimeoutMs: integer('pool.idleTimeoutMs', pool.idleTimeoutMs, 0, DEFAULT_POOL.idleTimeoutMs),
    maxStarting: integer('pool.maxStarting', pool.maxStarting, 1, defaultMaxStarting()),
    maxQueue: integer('pool.maxQueue', pool.maxQueue, 0, DEFAULT_POOL.maxQueue),
    recycleAfterRuns: integer('pool.recycleAfterRuns', pool.recycleAfterRuns, 1, DEFAULT_POOL.recycleAfterRuns),
    maxRssMb: positive('pool.maxRssMb', pool.maxRssMb, DEFAULT_POOL.maxRssMb),
    heapLimitMb: integer('pool.heapLimitMb', pool.heapLimitMb, 16, DEFAULT_POOL.heapLimitMb),
    memoryLimitMb,
    cgroup: cgroupPath(pool.cgroup),
    limits: resolveLimits(top.limits),
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
    confinement,
  };
}

/**
 * The bound of one request: `undefined` is the construction default, `null` the maximum, and a
 * number must be a non-negative finite number no larger than the maximum.
 */
export function resolveTimeout(
  field: string,
  value: unknown,
  settings: Pick<IsolateSettings, 'timeout' | 'maxTimeout'>,
): number {
  if (value === undefined) return settings.timeout;
  if (value === null) return settings.maxTimeout;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalid(isolateText.timeoutInvalid(field, describeValue(value)));
  }
  if (value > settings.maxTimeout) throw invalid(isolateText.timeoutAboveMax(field, value, settings.maxTimeout));
  return value;
}

/**
 * The CPU-time bound of one request: `undefined` is the construction default (`null`: none), and a
 * number must be a positive finite number of milliseconds.
 */
export function resolveCpuTimeout(
  field: string,
  value: unknown,
  settings: Pick<IsolateSettings, 'cpuTimeout'>,
): number | null {
  if (value === undefined) return settings.cpuTimeout;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(isolateText.cpuTimeoutInvalid(field, describeValue(value)));
  }
  return value;
}
