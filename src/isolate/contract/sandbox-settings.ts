/**
 * The settings a pool member's supervisor is built with: its SETTINGS binding, JSON in the
 * member's config (host/member/supervisor-config.ts), read by workerd/supervisor.ts. Data only: the texts the
 * worker side throws are functions it imports (texts.ts `sandboxText`, `supervisorText`). Types
 * only, free of Node, so both the host and the worker bundles check against them.
 */

/**
 * The caps the harness enforces in a run's dynamic worker. The supervisor loads them beside the
 * harness as a JSON module (sandbox-constants.ts `LIMITS_MODULE`), which the harness copies when
 * it is evaluated, before any user module (workerd/sandbox-limits.ts): no program can give its own
 * run other caps.
 */
export interface SandboxLimits {
  maxLogLines: number;
  maxLogBytes: number;
  maxToolArgsBytes: number;
  /** `limits.maxConcurrentToolCalls`. */
  maxConcurrentToolCalls: number;
  /** `limits.maxConcurrentToolArgsBytes`. */
  maxConcurrentToolArgsBytes: number;
}

/** The supervisor's SETTINGS binding. */
export interface SupervisorSettings {
  /** The channel's token, proven by the host's WebSocket upgrade in `tokenHeader`. */
  token: string;
  tokenHeader: string;
  /** The outbound relay's token. */
  hostToken: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  entryModule: string;
  harnessModule: string;
  /** The module name of `sandbox`, the harness's caps. */
  limitsModule: string;
  /** The largest frame sent to the host (options.ts `maxSupervisorFrameBytes`). */
  maxFrameBytes: number;
  /** The largest outcome frame as workerd's RPC serializes it (options.ts `MAX_OUTCOME_RPC_BYTES`). */
  maxOutcomeRpcBytes: number;
  /** `limits.maxResultBytes`. */
  maxResultBytes: number;
  /** `limits.maxRequestBodyBytes`. */
  maxRequestBodyBytes: number;
  /** `limits.maxConcurrentFetches`. */
  maxConcurrentFetches: number;
  /** The caps of every run's harness. */
  sandbox: SandboxLimits;
}
