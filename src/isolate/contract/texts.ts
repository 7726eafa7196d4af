/**
 * Every text the isolate executor composes: failures of a run (written for the model that reads
 * them), rejections (written for the host developer), and the option errors. The texts composed
 * inside a pool member's workerd process are two objects of their own, `sandboxText` (a run's
 * dynamic worker, workerd/harness.ts) and `supervisorText` (workerd/supervisor.ts), which the worker
 * bundles import (this module is free of Node for them); `isolateText` holds them too.
 */
import { formatDidYouMean } from '../../protocol/did-you-mean.js';

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
  /** What a number rule of the option table (`NumberRule` in host/options/table.ts) takes. */
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

/** Every isolate text: the two above, and those the host composes. Pure, so the worker bundles drop it. */
export const isolateText = /* @__PURE__ */ Object.assign({}, sandboxText, supervisorText, {
  // --- a run that failed without a thrown value of its own -------------------------------------
  /** The sandbox process ran out of heap; V8 aborts the whole process. */
  outOfMemory: (heapLimitMb: number) =>
    `The execution ran out of memory: the sandbox heap is capped at ${heapLimitMb} MB. Work on smaller pieces of data and return less.`,
  /** The execution's process passed `pool.memoryLimitMb` (the watchdog or the cgroup ended it). */
  memoryLimit: (memoryLimitMb: number) =>
    `The execution ran out of memory: it is capped at ${memoryLimitMb} MB (pool.memoryLimitMb), heap, buffers and WebAssembly memory together. Work on smaller pieces of data and return less.`,
  /** The host could not rebuild the encoded value (too deeply nested for its stack, or malformed). */
  resultUndecodable: (detail: string) => `The execution's result could not be rebuilt on the host: ${detail}`,
  /** A request whose start message (code and modules, or invokeHandle arguments) is over `limits.maxRequestBytes`. */
  requestTooLarge: (size: number, cap: number) =>
    `This request is ${size} bytes as sent to the sandbox (its code and modules, or its invokeHandle arguments), above the cap of ${cap} bytes (limits.maxRequestBytes). Send a smaller program, or pass large data through a tool.`,
  /** A request whose code is over `limits.maxCodeBytes`: refused before anything reads it. */
  codeTooLarge: (size: number, cap: number) =>
    `This request's code is ${size} bytes, above the cap of ${cap} bytes (limits.maxCodeBytes). Send a smaller program, or pass large data through a tool.`,
  /** Thrown in the sandbox by a tool call whose result is over `limits.maxToolResultBytes`. */
  toolResultTooLarge: (tool: string, size: number, cap: number) =>
    `The result of tool "${tool}" is ${size} bytes as JSON, above the cap of ${cap} bytes (limits.maxToolResultBytes). Ask the tool for less per call.`,
  /** A sandbox fetch whose response body is over `limits.maxResponseBodyBytes`. */
  responseBodyTooLarge: (cap: number) =>
    `The response to this fetch has a body over the cap of ${cap} bytes (limits.maxResponseBodyBytes).`,
  /** The run's process wrote more than `limits.maxProcessOutputBytes` to its output; it was killed. */
  processOutputTooLarge: (cap: number) =>
    `The execution's process wrote more than ${cap} bytes to its output, the cap (limits.maxProcessOutputBytes), and was ended. A program's console never writes there (console.log, console.warn and console.error are returned as logs; the other methods are dropped in the sandbox, as upstream leaves them out of its logs): this was workerd's own output about the run.`,
  /** A relayed request the host's Request cannot represent (a method or a body it refuses). */
  relayRequestRefused: (detail: string) => `This fetch cannot be relayed to the host: ${detail}`,
  /** How a process ended: its signal, or its exit code (a shell reports a signal as 128 + its number). */
  exitStatus: (code: number | null, signal: string | null) =>
    signal !== null
      ? `killed by ${signal}`
      : code !== null && code > 128
        ? `signal ${code - 128}`
        : `exit code ${String(code)}`,
  /** A dispatch function that answered a tool call with something other than an envelope string. */
  dispatchNotEnvelope: (got: string) => `dispatch returned ${got} instead of an envelope string`,
  /** The sandbox process ended during the run for a reason we did not cause. */
  processEnded: (cause: string) =>
    `The sandbox process ended during the execution (${cause}). The execution was lost; running it again starts a fresh sandbox.`,

  /** The outbound function returned something other than a Response. */
  outboundNotResponse: (got: string) =>
    `The outbound function must return a Response (or a promise of one), got ${got}.`,
  /** A relayed request outside the frame grammar; the host answers it with this failure. */
  relayRequestMalformed: 'The sandbox sent a malformed relay frame for this fetch.',
  /**
   * The pool's members together passed `pool.memoryBudgetMb`, and this execution's process held
   * the most: the run was within its own cap, so the text names the budget, not `memoryLimitMb`.
   */
  memoryBudget: (usedMb: number, budgetMb: number, memberMb: number) =>
    `The execution ran out of memory: the pool's members together held ${Math.round(usedMb)} MB, above their budget of ${budgetMb} MB (pool.memoryBudgetMb), and this execution's process held the most, ${Math.round(memberMb)} MB. Work on smaller pieces of data and return less, or run fewer large executions at once.`,
  /**
   * The run's program did not start within `pool.programStartTimeoutMs` of its hand-off: its
   * process was too busy to load its worker, or a module's top-level code ran that long.
   */
  programStartTimedOut: (ms: number) =>
    `The execution's program did not start within ${ms} ms of being handed to a sandbox process (pool.programStartTimeoutMs): the process was too busy to load it, or a module's top-level code ran that long. The process was ended; retry, move long work out of module top level, or raise pool.programStartTimeoutMs.`,
  /**
   * A tenant's newest run, ended because its tenant held more than its share of the memory budget
   * while another tenant's run waited for memory (tenancy.ts).
   */
  tenantShareReclaimed: (heldMb: number, shareMb: number, percent: number) =>
    `The execution was ended so that another tenant's run could have memory: its tenant held ${Math.round(heldMb)} MB of the sandbox processes' memory, above its share of ${Math.round(shareMb)} MB (--tenant-memory-percent ${percent} of what pool.memoryBudgetMb lets the pool grow into) while another tenant's run waited, and this was its newest run. Run it again: it waits until its tenant is within its share.`,
  /** The host's warning when the memory guard's thread failed and a new one took over its guards. */
  memoryGuardRestarted: (detail: string, guarded: number) =>
    `The IsolateExecutor memory guard's thread failed (${detail}); a new thread took over guarding the running executions (${guarded}) under pool.memoryLimitMb.`,

  // --- rejections (ExecutorError) -----------------------------------------------------------------
  disposed: 'The IsolateExecutor has been disposed; create a new one to run more code.',
  queueFull: (maxQueue: number) =>
    `The IsolateExecutor queue is full: ${maxQueue} executions are already waiting for a sandbox process (pool.maxQueue). Retry later or raise pool.maxQueue / pool.maxWorkers.`,
  sandboxUnavailable: (detail: string) => `The workerd sandbox could not be started: ${detail}`,
  /**
   * A process could not be started for want of file descriptors: this process's (EMFILE) or the
   * system's (ENFILE). Names the limit and what raises it; the pool starts processes again by itself.
   */
  descriptorsExhausted: (code: 'EMFILE' | 'ENFILE', limit: number | undefined) =>
    code === 'EMFILE'
      ? `The workerd sandbox could not be started: this process has opened all the file descriptors it may (EMFILE; its limit is ${limit ?? 'unknown here'}, \`ulimit -n\`). Raise \`ulimit -n\` (LimitNOFILE= under systemd), or lower --max-connections and pool.maxWorkers; new runs start again once descriptors are free.`
      : `The workerd sandbox could not be started: the system's table of open files is full (ENFILE; this process's own limit is ${limit ?? 'unknown here'}, \`ulimit -n\`). Raise the system's limit (fs.file-max), or run fewer processes on this host; new runs start again once descriptors are free.`,
  cgroupUnusable: (root: string, detail: string) =>
    `The cgroup given as pool.cgroup (${root}) cannot hold the sandbox processes: ${detail}`,
  cgroupNotV2: 'it is not a cgroup v2 directory (it has no cgroup.controllers).',
  cgroupNoMemory: 'its memory controller is not available (memory is not in its cgroup.controllers).',
  binaryMissing: (platformPackage: string, detail: string) =>
    `No workerd binary for this platform: the package ${platformPackage} could not be resolved (${detail}). Install the workerd package with its optional dependencies.`,
  binaryNamedMissing: (variable: string, path: string) =>
    `No workerd binary at ${path}, which the environment variable ${variable} names. Point it at a workerd binary, or unset it to run the installed workerd package's.`,
  platformUnsupported: (platform: string) =>
    `workerd has no binary for the platform ${platform}; IsolateExecutor runs on linux and darwin (x64, arm64).`,
  spawnTimedOut: (ms: number) => `workerd did not report a listening socket within ${ms} ms.`,
  spawnExited: (status: string, stderrTail: string) =>
    `workerd exited during startup (${status})${stderrTail ? `: ${stderrTail}` : ''}`,
  executionNotFound: (executionId: string) =>
    `No retained execution has the id ${JSON.stringify(executionId)}: it was never retained, it was closed (by closeHandles, or idle past pool.retainedIdleTimeoutMs), or its process ended.`,
  /** A retained execution closed by `closeHandles`, named by a later call. */
  executionClosed: (executionId: string) =>
    `The retained execution ${JSON.stringify(executionId)} was closed with closeHandles, and its process ended. Run the program again for new handles.`,
  /** A retained execution closed at its idle time-to-live, named by a later call. */
  executionExpired: (executionId: string, idleTimeoutMs: number) =>
    `The retained execution ${JSON.stringify(executionId)} was closed after ${idleTimeoutMs} ms without a call (pool.retainedIdleTimeoutMs), and its process ended. Run the program again for new handles.`,
  /** A retained execution closed so that another tenant's run could have the memory it held (tenancy.ts). */
  executionEvicted: (executionId: string) =>
    `The retained execution ${JSON.stringify(executionId)} was evicted, and its process ended: its tenant held more than its share of the memory budget (--tenant-memory-percent) while another tenant's run waited for memory. Run the program again for new handles.`,
  /** A retained execution closed because its tenant had gone and held more than its share (tenancy.ts). */
  executionEvictedGone: (executionId: string) =>
    `The retained execution ${JSON.stringify(executionId)} was evicted, and its process ended: its tenant's connections had all closed, and its retained executions held more than its share of the memory budget (--tenant-memory-percent). Run the program again for new handles.`,
  /** An execution asking to retain while the executor holds `pool.maxRetained` retained executions (LIMIT_EXCEEDED). */
  retainedLimit: (maxRetained: number) =>
    `This IsolateExecutor already holds ${maxRetained} retained executions, the cap (pool.maxRetained); each keeps a sandbox process of its own. Close some with closeHandles(executionId), or raise pool.maxRetained.`,
  /** A run started from a tool call of a running execution while `pool.maxNestedRuns` such runs are admitted (LIMIT_EXCEEDED). */
  nestedLimit: (maxNestedRuns: number) =>
    `This run was started from a tool call of a running execution, and ${maxNestedRuns} such nested runs already run beyond pool.maxWorkers, the cap (pool.maxNestedRuns). Nest fewer runs at once, or raise pool.maxNestedRuns.`,
  handleNotFound: (executionId: string, handle: string) =>
    `The retained execution ${JSON.stringify(executionId)} has no handle ${JSON.stringify(handle)}.`,
  executionLost: (executionId: string) =>
    `The retained execution ${JSON.stringify(executionId)} is gone: the sandbox process that held it ended.`,

  // --- request validation (INVALID_REQUEST) -------------------------------------------------------
  requestNotObject: 'execute() takes one request object: { code, providers?, dispatch?, modules?, timeout?, ... }.',
  codeNotString: (got: string) => `request.code must be a string, got ${got}.`,
  providersNotArray: (got: string) =>
    `request.providers must be an array of provider descriptors or undefined, got ${got}.`,
  timeoutInvalid: (field: string, got: string) =>
    `${field} must be a non-negative finite number of milliseconds, null (the executor's maxTimeout) or undefined (its default), got ${got}.`,
  cpuTimeoutInvalid: (field: string, got: string) =>
    `${field} must be a positive finite number of milliseconds of CPU time, or undefined (the executor's default), got ${got}.`,
  timeoutAboveMax: (field: string, timeout: number, maxTimeout: number) =>
    `${field} ${timeout} ms is above this executor's maxTimeout of ${maxTimeout} ms. Ask for at most ${maxTimeout}, or null for the maximum.`,
  dispatchMissing: (providerName: string) =>
    `request.dispatch must be a function when providers are declared (provider "${providerName}" has no way to reach the host).`,
  dispatchNotFunction: (got: string) => `request.dispatch must be a function, null or undefined, got ${got}.`,
  outboundInvalid: (field: string, got: string) =>
    `${field} must be a function (Request) => Response, null (blocked) or undefined (the default), got ${got}.`,
  modulesInvalid: (name: string) =>
    `request.modules[${JSON.stringify(name)}] must be module source text or one of {js}, {cjs}, {text}, {json}.`,
  moduleNameOutside: (name: string) =>
    `request.modules[${JSON.stringify(name)}]: a module name must stay inside the worker's module root (no leading "/", no ".." above it), as "lib.js" or "dir/lib.js" does.`,
  modulesNotRecord: (got: string) => `request.modules must be a record of module name to source, got ${got}.`,
  booleanInvalid: (field: string, got: string) => `${field} must be a boolean or undefined, got ${got}.`,
  tenantInvalid: (got: string) => `request.tenant must be a non-empty string or undefined, got ${got}.`,
  invokeNotObject: 'invokeHandle() takes one request object: { executionId, handle, args?, dispatch?, timeout? }.',
  stringFieldInvalid: (field: string, got: string) => `${field} must be a non-empty string, got ${got}.`,
  argsInvalid: (got: string) => `invokeHandle args must be an array or undefined, got ${got}.`,
  argsUnencodable: (detail: string) => `invokeHandle args cannot be sent into the sandbox: ${detail}`,
  argsHoldFunction: 'functions cannot be passed into the sandbox',

  // --- construction options -----------------------------------------------------------------------
  optionsNotObject: (got: string) =>
    `new IsolateExecutor(options): options must be an object or undefined, got ${got}.`,
  optionInvalid: (option: string, requirement: string, got: string) =>
    `IsolateExecutor option ${option} must be ${requirement}, got ${got}.`,
  optionUnknown: (option: string, known: string, nearest?: string) =>
    `IsolateExecutor has no option ${option}${formatDidYouMean(nearest)}; the options are ${known}.`,
  optionMinAboveMax: (minWorkers: number, maxWorkers: number) =>
    `IsolateExecutor option ${optionRuleText.minAboveMax('pool.minWorkers', minWorkers, 'pool.maxWorkers', maxWorkers)}.`,
  optionTimeoutAboveMax: (timeout: number, maxTimeout: number) =>
    `IsolateExecutor option ${optionRuleText.timeoutAboveMax('timeout', timeout, 'maxTimeout', maxTimeout)}.`,
} as const);
