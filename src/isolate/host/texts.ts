/**
 * Every text the isolate executor's host composes: failures of a run (written for the model that
 * reads them), rejections (written for the host developer), and the option errors, with the texts
 * a pool member composes (contract/texts.ts) beside them. Node-side only: the worker bundles never
 * import it.
 */
import { formatDidYouMean } from '../../protocol/did-you-mean.js';
import { formatTimeoutInvalid } from '../../protocol/texts.js';
import { optionRuleText, sandboxText, supervisorText } from '../contract/texts.js';

/** Every isolate text: the member's two, and those the host composes. */
export const isolateText = Object.assign({}, sandboxText, supervisorText, {
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
  /** `option`: the bound's name, where a caller gave the bound (a daemon's flag). */
  executionExpired: (executionId: string, idleTimeoutMs: number, option = 'pool.retainedIdleTimeoutMs') =>
    `The retained execution ${JSON.stringify(executionId)} was closed after ${idleTimeoutMs} ms without a call (${option}), and its process ended. Run the program again for new handles.`,
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
  timeoutInvalid: formatTimeoutInvalid,
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
