/**
 * How an executor ended a run that did not settle with its program's own outcome, as data: one
 * discriminated union on a stable `code`, carried on the result (`ExecuteResult.ending`) beside its
 * text, across the daemon's wire as it is. Callers match on `code`, never on the text, which is
 * written for the model and may be reworded. Runtime-neutral. The codes are in docs/protocol.md.
 */

/** Each way an executor ends a run, with what its text names. */
export type RunEnding =
  /** The run passed its wall-clock bound (`timeout`, in ms). */
  | { code: 'EXECUTION_TIMEOUT'; timeout: number }
  /** The run spent its CPU-time bound (`cpuTimeout`, in ms). */
  | { code: 'CPU_TIMEOUT'; cpuTimeout: number }
  /** The run's program did not start within `pool.programStartTimeoutMs` of its hand-off. */
  | { code: 'PROGRAM_START_TIMEOUT'; programStartTimeoutMs: number }
  /** The run's start message was `bytes` long, over `limits.maxRequestBytes`: it was never sent. */
  | { code: 'REQUEST_TOO_LARGE'; bytes: number; maxRequestBytes: number }
  /** An isolate's heap stayed full after a full collection (`pool.heapLimitMb`). */
  | { code: 'OUT_OF_MEMORY'; heapLimitMb: number }
  /** The run's process passed `pool.memoryLimitMb`. */
  | { code: 'MEMORY_LIMIT'; memoryLimitMb: number }
  /** The run's process wrote more than `limits.maxProcessOutputBytes` to its output. */
  | { code: 'OUTPUT_TOO_LARGE'; maxProcessOutputBytes: number }
  /** The pool's members together passed `pool.memoryBudgetMb`, and the run's process held the most. */
  | { code: 'MEMORY_BUDGET'; usedMb: number; budgetMb: number; memberMb: number }
  /** Its tenant held more than its share of the memory budget while another tenant's run waited. */
  | { code: 'TENANT_SHARE_RECLAIMED'; heldMb: number; shareMb: number; percent: number }
  /** The run's process ended by itself: its exit code, or the signal that ended it. */
  | { code: 'PROCESS_ENDED'; exitCode: number | null; signal: string | null };

export type RunEndingCode = RunEnding['code'];
