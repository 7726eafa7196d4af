/**
 * The pool's options (`pool.*`) of IsolateExecutor, as a schema: in the order a refusal and --help
 * list them. `memoryBudgetMb`, `maxWorkers` and `maxStarting` default by the host (host-sizing.ts,
 * applied by resolve.ts).
 */
import * as v from 'valibot';
import { option, optionsSchema } from '../../../protocol/parse-options.js';
import { optionRuleText } from '../../contract/texts.js';
import {
  DEFAULT_STARTING,
  defaultMaxStarting,
  defaultMaxWorkers,
  defaultMemoryBudgetMb,
  SMALLEST_MEMBER_MB,
} from './host-sizing.js';
import { MAX_TIMER_MS } from './max-timer.js';
import { numberOption } from './option-row.js';

/** Whether it can name a cgroup v2 directory: an absolute path, with no NUL in it. */
export function isCgroupPath(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('/') && !value.includes('\0');
}

export const POOL_SCHEMA = optionsSchema(
  {
    /**
     * workerd processes running executions at once (one execution per process), an upper bound: the
     * pool grows on demand within `memoryBudgetMb`. Default: the most members that budget could
     * hold at a member's smallest measured cost, within the open-file limit (`defaultMaxWorkers`).
     */
    maxWorkers: numberOption({
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
    /** Processes kept even when idle; the pool never reaps below it. Default 0. */
    minWorkers: numberOption({
      unit: 'count',
      min: 0,
      default: 0,
      flag: 'min-workers',
      role: 'sizing',
      flagHelp: 'processes kept even when idle',
      description: 'processes kept even when idle; the pool never reaps below it',
    }),
    /** Warm processes kept ready beyond the busy ones, so a kill or a recycle never waits for a spawn. Default 1. */
    spare: numberOption({
      unit: 'count',
      min: 0,
      default: 1,
      flag: 'spare',
      role: 'sizing',
      flagHelp: 'warm processes kept ready beyond the busy ones',
      description: 'warm idle processes kept ready beyond the busy ones',
    }),
    /** An idle process beyond `minWorkers` and the spares is ended after this many ms. Default 30000. */
    idleTimeoutMs: numberOption({
      unit: 'ms',
      min: 0,
      default: 30_000,
      flag: 'idle-timeout-ms',
      role: 'sizing',
      flagHelp: 'end a process idle this long, beyond `--min-workers` and the spares',
      description: 'an idle process beyond `minWorkers` and the spares is ended after this long',
    }),
    /** Processes starting at once, so a burst does not spend every core on spawning. Default: 16 times the CPU count, 4 to 128. */
    maxStarting: numberOption({
      unit: 'count',
      min: 1,
      defaultText: `${DEFAULT_STARTING.perCore} times the CPU count, ${DEFAULT_STARTING.least} to ${DEFAULT_STARTING.most}`,
      hostDefault: defaultMaxStarting,
      flag: 'max-starting',
      role: 'sizing',
      flagHelp: 'processes starting at once',
      description: 'processes starting at once, so a burst does not spend every core on spawning',
    }),
    /** Executions allowed to wait for a process beyond `maxWorkers` before `QUEUE_FULL`. Default 5000. */
    maxQueue: numberOption({
      unit: 'count',
      min: 0,
      default: 5_000,
      flag: 'max-queue',
      role: 'limit',
      flagHelp: 'executions waiting beyond `--max-workers` before `QUEUE_FULL`',
      description: 'executions that may wait beyond `maxWorkers` (for a process to free up), before `QUEUE_FULL`',
    }),
    /** A process is replaced after this many runs. Default 200. */
    recycleAfterRuns: numberOption({
      unit: 'count',
      min: 1,
      default: 200,
      flag: 'recycle-after-runs',
      role: 'sizing',
      flagHelp: 'replace a process after this many runs',
      description: 'a process is replaced after this many runs',
    }),
    /** A process is replaced once its resident set passes this many MB (checked after each run). Default 512. */
    maxRssMb: numberOption({
      unit: 'mb',
      kind: 'positive',
      min: 0,
      default: 512,
      flag: 'max-rss-mb',
      role: 'sizing',
      flagHelp: 'replace a process past this resident set size',
      description: 'a process is replaced once its resident set passes this (checked after each run)',
    }),
    /** V8 heap cap of every sandbox isolate (`--max-old-space-size`), in MB. Default 256. */
    heapLimitMb: numberOption({
      unit: 'mb',
      min: 16,
      default: 256,
      flag: 'heap-limit-mb',
      role: 'limit',
      flagHelp: 'V8 heap cap of every sandbox isolate',
      description: "V8 heap cap of every isolate (`--max-old-space-size`, in the config's `v8Flags`)",
    }),
    /**
     * Memory cap of one execution, in MB: everything its process holds (heap, ArrayBuffers,
     * WebAssembly memory), enforced during the run. Default 512.
     */
    memoryLimitMb: numberOption({
      unit: 'mb',
      min: 64,
      default: 512,
      flag: 'memory-limit-mb',
      role: 'limit',
      flagHelp: 'memory cap of one execution: heap, buffers and WebAssembly memory together',
      description:
        "memory cap of one execution: its process's resident set (heap, ArrayBuffers, WebAssembly memory), enforced during the run (see [Limits](#limits))",
    }),
    /**
     * The memory, in MB, the pool's members may use together, as measured (their private resident
     * memory, and the pages they share once). The pool starts no member that would pass it, so
     * programs wait instead; should members grow past it, the one holding the most is ended.
     * Default: half of the host's memory (its cgroup v2 `memory.max` when set, else the machine's).
     */
    memoryBudgetMb: numberOption({
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
    /**
     * A cgroup v2 directory delegated to this executor (for example a systemd unit's, with
     * `Delegate=yes`). When set, every member runs in a child cgroup of it whose `memory.max` is
     * `memoryLimitMb`, so the kernel enforces the cap. Default: none (a watchdog enforces it).
     */
    cgroup: option(v.custom<string>(isCgroupPath), {
      type: 'string',
      defaultText: 'none',
      rule: optionRuleText.cgroupPath,
      flag: 'cgroup',
      flagHelp:
        'a cgroup v2 directory delegated to the daemon; each process runs in a child of it capped at `--memory-limit-mb`',
      description:
        'an absolute path of a cgroup v2 directory delegated to the executor; each member then runs in a child cgroup of it whose `memory.max` is `pool.memoryLimitMb`',
    }),
    /**
     * Retained executions (`retainHandles`) this executor holds at once; each keeps a process of its
     * own. One more execution asking to retain is refused with `LIMIT_EXCEEDED`. Default 64.
     */
    maxRetained: numberOption({
      unit: 'count',
      min: 0,
      default: 64,
      role: 'limit',
      description:
        'retained executions (`retainHandles`) held at once, each in a process of its own; one more is refused with `LIMIT_EXCEEDED` ([Retained handles](#retained-handles))',
    }),
    /** A retained execution no call has used for this many ms is closed, and its process ends. Default 300000. */
    retainedIdleTimeoutMs: numberOption({
      unit: 'ms',
      // A Node timer closes it, so no longer than the longest delay a timer takes.
      min: 1,
      max: MAX_TIMER_MS,
      default: 300_000,
      role: 'limit',
      description: 'a retained execution no call has used for this long is closed, and its process ends',
    }),
    /**
     * A run's program must start (its worker loaded in the process it was handed to) within this
     * many ms, or the run ends and its process is ended. The run's `timeout` counts from the
     * program's start, so the load of a busy process is not the program's. Default 10000.
     */
    programStartTimeoutMs: numberOption({
      unit: 'ms',
      min: 1,
      max: MAX_TIMER_MS,
      default: 10_000,
      flag: 'program-start-timeout-ms',
      role: 'limit',
      flagHelp:
        "a run's program must start within this long of its hand-off to a process; its timeout counts from then",
      description:
        "a run's program must start (its worker loaded in the process it was handed to) within this long, or the run ends and its process is ended; a process that spent CPU time in that period (loading slowly, or a first turn that spins) gets another, its run clock counting that CPU time; the run's `timeout` counts from the program's start, so a loaded process's slow start is not the program's",
    }),
    /**
     * Executions of the same tenant (a request's `tenant`, the daemon's token) one process runs at
     * once, each in a fresh isolate. Executions of different tenants, or with no tenant, never share
     * a process. Above 1, a spin, a crash or an out-of-memory in one execution can end the others in
     * its process, and `memoryLimitMb` caps the process. Default 1: one execution per process.
     */
    runsPerMember: numberOption({
      unit: 'count',
      min: 1,
      max: 64,
      default: 1,
      flag: 'runs-per-member',
      role: 'sizing',
      flagHelp:
        'executions of one tenant a process runs at once, each in its own isolate (1: one execution per process)',
      description:
        "executions of the same tenant (a request's `tenant`, the daemon's token) one process runs at once, each in a fresh isolate, as Cloudflare runs a tenant's workers; executions of different tenants, or with no tenant, never share a process. Above 1, a spin, a crash or an out-of-memory in one execution can end the others in its process, and `memoryLimitMb` caps the process, not the execution ([The tenant level](#the-tenant-level))",
    }),
    /**
     * Runs admitted beyond `maxWorkers` because a tool call of a running execution of this executor
     * started them (`codemode.run`), so a nested run never waits on the slot its parent holds.
     * One more is refused with `LIMIT_EXCEEDED`. Default 16.
     */
    maxNestedRuns: numberOption({
      unit: 'count',
      min: 0,
      default: 16,
      role: 'limit',
      description:
        'runs admitted beyond `maxWorkers` because a tool call of a running execution started them ([Nested runs](#nested-runs)); one more is refused with `LIMIT_EXCEEDED`',
    }),
  },
  { arrays: false },
);
