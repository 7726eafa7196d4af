/**
 * The texts both sides of a pool member compose: `sandboxText` (a run's dynamic worker,
 * workerd/harness.ts), `supervisorText` (workerd/supervisor.ts), which the worker bundles import
 * (this module is free of Node for them), and the option rule texts the host and the daemon share.
 * The host's own texts, with these two, are `isolateText` (host/texts.ts).
 */

/** Thrown in a run's dynamic worker (harness.ts). */
export const sandboxText = {
  /** The marker line after which captured lines were dropped. */
  logsCut: (maxLines: number, maxBytes: number) =>
    `[The logs were cut here: an execution keeps at most ${maxLines} lines and ${maxBytes} bytes of console output (limits.maxLogLines, limits.maxLogBytes). Later lines were dropped.]`,
  /** Thrown in the sandbox by a tool call whose arguments are over `limits.maxToolArgsBytes`. */
  toolArgsTooLarge: (size: number | string, cap: number) =>
    `The arguments of this tool call are ${size} bytes as JSON, above the cap of ${cap} bytes (limits.maxToolArgsBytes). Send less per call.`,
  /**
   * Thrown in the sandbox by a tool call whose arguments alone are over
   * `limits.maxConcurrentToolArgsBytes`, so it could never leave beside other calls nor alone.
   */
  toolArgsOverWaitingCap: (size: number | string, cap: number) =>
    `The arguments of this tool call are ${size} bytes as JSON, above the cap of ${cap} bytes that the calls an execution has waiting on the host may hold together (limits.maxConcurrentToolArgsBytes). This call was not sent; send less per call.`,
  /** Thrown in the sandbox when a provider's proxySource evaluates to something other than an object. */
  proxySourceNotObject: (name: string) =>
    `The proxySource of provider "${name}" must evaluate to a function (call) => object, and that function must return an object.`,
} as const;

/** Thrown or written by the supervisor (supervisor.ts). */
export const supervisorText = {
  /** The settled value, encoded, is over `limits.maxResultBytes` (the supervisor checks it before sending). */
  resultTooLarge: (size: number | string, cap: number) =>
    `The execution's result is ${size} bytes once encoded, above the cap of ${cap} bytes (limits.maxResultBytes). Return less: a summary, or the part that matters.`,
  /** Thrown in the sandbox by a tool call whose frame to the host (its names and escaped arguments) is over what the caps let the channel carry. */
  callTooLarge: (size: number | string, cap: number) =>
    `This tool call is ${size} bytes as sent to the host (its tool name and its arguments), above the ${cap} bytes the channel carries (set by limits.maxToolArgsBytes). Send less per call, under a shorter tool name.`,
  /**
   * An outcome whose frame to the host (its value or error text, and its logs) is over what the
   * channel carries: the frame cap the limits set, or workerd's RPC limit, which it crosses first.
   */
  outcomeTooLarge: (size: number | string, frameCap: number, rpcCap: number) =>
    `The execution's outcome is ${size} bytes as sent to the host (its value or error text, and its logs), above what the channel carries: ${frameCap} bytes a frame (set by limits.maxResultBytes, limits.maxLogBytes and limits.maxLogLines), and ${rpcCap} bytes through workerd's RPC inside the sandbox process (its limit of 32 MiB a value). Return, throw or log less.`,
  /** A sandbox fetch whose request body is over `limits.maxRequestBodyBytes`. */
  requestBodyTooLarge: (cap: number) =>
    `This fetch's request body is over the cap of ${cap} bytes (limits.maxRequestBodyBytes); nothing was sent.`,
  /** A sandbox fetch started while the run already has `limits.maxConcurrentFetches` in flight. */
  tooManyFetches: (cap: number) =>
    `This run already has ${cap} fetches in flight, the cap (limits.maxConcurrentFetches); nothing was sent. Wait for some to finish before starting more.`,
  /** A sandbox fetch arriving after its run settled (the supervisor's text). */
  outboundAfterRun: 'This fetch was made after its execution had finished.',
  /** A relay reply outside the frame grammar (relay-frame.ts); the sandbox fetch fails with it. */
  relayMalformed: 'The host answered this fetch with a malformed relay frame.',
  /** A question to the host from a supervisor whose host connection closed. */
  hostGone: 'The host connection is closed.',
  /** workerd's stderr line for a host message the supervisor failed to handle (it ends in the error's message). */
  supervisorFailure: 'codemode supervisor: a host message failed: ',
  /** The rest of that line for a frame outside the channel grammar (channel.ts). */
  messageMalformed: 'the frame is not a message of the channel grammar',
} as const;

/**
 * How each option rule is worded, written once: the constructor's refusals (below, naming the
 * option) and the daemon's command line's (src/server/texts.ts, naming the flag) are composed
 * from these, so a rule cannot read one way in one and another way in the other.
 */
export const optionRuleText = {
  /** What a number rule of the option table (`NumberRule` in host/options/option-row.ts) takes. */
  number: (rule: { readonly kind: 'integer' | 'positive' | 'atLeast'; readonly min: number; readonly max?: number }) =>
    rule.kind === 'positive'
      ? 'a positive finite number'
      : rule.kind === 'atLeast'
        ? `a finite number >= ${rule.min}`
        : rule.max === undefined
          ? optionRuleText.integerAtLeast(rule.min)
          : `an integer ${optionRuleText.range(rule.min, rule.max)}`,
  integerAtLeast: (min: number) => `an integer >= ${min}`,
  atLeast: (min: number) => `at least ${min}`,
  range: (min: number, max: number) => `from ${min} to ${max}`,
  oneOf: (valid: readonly string[]) => `one of ${valid.join(', ')}`,
  group: 'an object',
  outbound: 'a function (Request) => Response, null or undefined',
  cgroupPath: 'an absolute path of a cgroup v2 directory',
  /** The rule between `pool.minWorkers` and `pool.maxWorkers`, broken (rules.ts). */
  minAboveMax: (minName: string, minWorkers: number, maxName: string, maxWorkers: number) =>
    `${minName} (${minWorkers}) is above ${maxName} (${maxWorkers})`,
  /** The rule between `timeout` and `maxTimeout`, broken (rules.ts). */
  timeoutAboveMax: (timeoutName: string, timeout: number, maxName: string, maxTimeout: number) =>
    `${timeoutName} (${timeout} ms) is above ${maxName} (${maxTimeout} ms)`,
} as const;
