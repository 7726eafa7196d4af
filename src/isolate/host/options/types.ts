/** The construction options of `IsolateExecutor` as a caller writes them, and as resolved. */
import type { OutboundFetch } from '../../../protocol/types.js';
import type { ConfinementOption } from '../confinement/detect.js';

export interface IsolatePoolOptions {
  /**
   * workerd processes running executions at once (one execution per process), an upper bound: the
   * pool grows on demand within `memoryBudgetMb`. Default: the most members that budget could
   * hold at a member's smallest measured cost, within the open-file limit (`defaultMaxWorkers`).
   */
  maxWorkers?: number | undefined;
  /** Processes kept even when idle; the pool never reaps below it. Default 0. */
  minWorkers?: number | undefined;
  /** Warm processes kept ready beyond the busy ones, so a kill or a recycle never waits for a spawn. Default 1. */
  spare?: number | undefined;
  /** An idle process beyond `minWorkers` and the spares is ended after this many ms. Default 30000. */
  idleTimeoutMs?: number | undefined;
  /** Processes starting at once, so a burst does not spend every core on spawning. Default: 16 times the CPU count, 4 to 128. */
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
   * The memory, in MB, the pool's members may use together, as measured (their private resident
   * memory, and the pages they share once). The pool starts no member that would pass it, so
   * programs wait instead; should members grow past it, the one holding the most is ended.
   * Default: half of the host's memory (its cgroup v2 `memory.max` when set, else the machine's).
   */
  memoryBudgetMb?: number | undefined;
  /**
   * A cgroup v2 directory delegated to this executor (for example a systemd unit's, with
   * `Delegate=yes`). When set, every member runs in a child cgroup of it whose `memory.max` is
   * `memoryLimitMb`, so the kernel enforces the cap. Default: none (a watchdog enforces it).
   */
  cgroup?: string | undefined;
  /**
   * Retained executions (`retainHandles`) this executor holds at once; each keeps a process of its
   * own. One more execution asking to retain is refused with `LIMIT_EXCEEDED`. Default 64.
   */
  maxRetained?: number | undefined;
  /** A retained execution no call has used for this many ms is closed, and its process ends. Default 300000. */
  retainedIdleTimeoutMs?: number | undefined;
  /**
   * A run's program must start (its worker loaded in the process it was handed to) within this
   * many ms, or the run ends and its process is ended. The run's `timeout` counts from the
   * program's start, so the load of a busy process is not the program's. Default 10000.
   */
  programStartTimeoutMs?: number | undefined;
  /**
   * Executions of the same tenant (a request's `tenant`, the daemon's token) one process runs at
   * once, each in a fresh isolate. Executions of different tenants, or with no tenant, never share
   * a process. Above 1, a spin, a crash or an out-of-memory in one execution can end the others in
   * its process, and `memoryLimitMb` caps the process. Default 1: one execution per process.
   */
  runsPerMember?: number | undefined;
  /**
   * Runs admitted beyond `maxWorkers` because a tool call of a running execution of this executor
   * started them (`codemode.run`), so a nested run never waits on the slot its parent holds.
   * One more is refused with `LIMIT_EXCEEDED`. Default 16.
   */
  maxNestedRuns?: number | undefined;
}

/** The size caps of one execution. Every size is in bytes (UTF-8 for text). */
export interface IsolateLimitOptions {
  /** A request's code, checked before anything reads it (UTF-8). Default 15 MiB. */
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
   * What a run's process may write to its stdout and stderr: workerd's own lines (the console
   * methods not captured as logs are dropped in the sandbox); past it the run ends and the process
   * is killed. Default 1 MiB.
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
  /**
   * The CPU time, in ms, a turn of the program still running when its `timeout` passes may spend
   * to finish (upstream's timer cannot fire mid-turn, so what the turn settles is the result); past
   * it, the process is killed and the run times out. Default 3000.
   */
  turnGraceMs?: number | undefined;
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

/**
 * The options as resolved: each top-level option, and each pool option beside them. Built from
 * the option types' keys, so an option added to one of them and not resolved is a type error.
 */
export interface IsolateSettings
  extends Record<Exclude<keyof IsolateExecutorOptions, 'pool'>, unknown>,
    Record<Exclude<keyof IsolatePoolOptions, 'cgroup'>, number> {
  timeout: number;
  maxTimeout: number;
  /** The CPU-time bound of a request that sets none; `null`: none. */
  cpuTimeout: number | null;
  turnGraceMs: number;
  outbound: OutboundFetch | null;
  cgroup: string | null;
  limits: IsolateLimits;
  startupTimeoutMs: number;
  confinement: ConfinementOption;
}
