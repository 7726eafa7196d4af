/**
 * The settings the worker scripts are built with: the supervisor's SETTINGS binding
 * (supervisor-config.ts) and the harness's (sandbox-sources.ts). Types only, free of Node, so
 * tsconfig.worker.json checks the worker scripts against them.
 */

/** The supervisor's SETTINGS binding (worker/supervisor.js reads it). */
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
  outboundAfterRun: string;
  relayMalformed: string;
  hostGone: string;
  supervisorFailure: string;
  messageMalformed: string;
  /** The largest frame sent to the host (options.ts `maxSupervisorFrameBytes`), and the texts of a call and an outcome over it, with `{size}`. */
  maxFrameBytes: number;
  callTooLarge: string;
  outcomeTooLarge: string;
  /** The largest outcome frame as workerd's RPC serializes it (options.ts `MAX_OUTCOME_RPC_BYTES`). */
  maxOutcomeRpcBytes: number;
  /** `limits.maxResultBytes`, and its text with `{size}` for the measured size. */
  maxResultBytes: number;
  resultTooLarge: string;
  /** `limits.maxRequestBodyBytes`, and its text. */
  maxRequestBodyBytes: number;
  /** `limits.maxConcurrentFetches`, and its text. */
  maxConcurrentFetches: number;
  tooManyFetches: string;
  requestBodyTooLarge: string;
}

/**
 * The caps the harness enforces in the sandbox, and their texts. They are baked into each member's
 * copy of the harness source (sandbox-sources.ts), not handed over per run, so no program can
 * give its own run other caps.
 */
export interface SandboxLimits {
  maxLogLines: number;
  maxLogBytes: number;
  maxToolArgsBytes: number;
  /** The marker line after which captured lines were dropped. */
  logsCut: string;
  /** The text a tool call over `maxToolArgsBytes` throws; `{size}` stands for its size. */
  toolArgsTooLarge: string;
  /** `limits.maxConcurrentToolCalls`, and the text one call more throws. */
  maxConcurrentToolCalls: number;
  tooManyToolCalls: string;
  /** `limits.maxConcurrentToolArgsBytes`, and the text a call past it throws, with `{size}` and `{held}`. */
  maxConcurrentToolArgsBytes: number;
  toolArgsInFlightTooLarge: string;
}

/** What the harness module of every execution is built with (sandbox-sources.ts). */
export interface HarnessSettings {
  /** The key of a retained function's handle record (the protocol's `HANDLE_KEY`). */
  handleKey: string;
  /** The text for a `proxySource` whose value is not an object; `{name}` stands for the provider. */
  proxySourceNotObject: string;
}
