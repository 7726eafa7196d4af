/**
 * The `@cloudflare/codemode` dialect over any native executor. It knows nothing about which one
 * it wraps: it validates, plans, normalizes, hands the native executor one request, and renders
 * what comes back into the dialect's shape (flat prefixed log lines, the dialect's timeout text).
 */
import { RunObservation } from '../events/observe-run.js';
import { type ResolvedEventOptions, resolveEventOptions } from '../events/options.js';
import { codeBytesOver } from '../protocol/code-size.js';
import type { CompletionGuard } from '../protocol/dispatch.js';
import { ExecutionTimeoutError } from '../protocol/errors.js';
import type { RunEnding } from '../protocol/run-endings.js';
import { TIMEOUT_MESSAGE } from '../protocol/texts.js';
import type { ExecuteRequest, ExecuteResult, Executor, LogEntry } from '../protocol/types.js';
import { resolveRecordOptions } from '../record/record-options.js';
import { beginRecording, runRecorded } from '../record/recorder.js';
import { assertNativeExecutor, warnUnknownOptions } from './call-checks.js';
import { validateExecution } from './names.js';
import { NormalizedCode } from './normalized-code.js';
import { type CodemodeExecutorOptions, resolveCodemodeOptions } from './options.js';
import { assertFunctionRecords, createDispatch, planExecution } from './plan.js';
import { BARE_RECORD_DEPRECATION, formatCodeTooLarge, LOG_PREFIXES } from './texts.js';
import type { CodemodeExecuteResult, ExtendedExecuteOptions, ExtendedProvider, ToolFunction } from './types.js';

/** The namespace a bare record is bound to, as in the dialect. */
const DEFAULT_PROVIDER_NAME = 'codemode';

/** Native log entries into the flat strings the dialect returns: `[warn] late`. */
export function formatLogs(entries: readonly LogEntry[]): string[] {
  // A level this adapter does not know (a newer native side) keeps its text unprefixed.
  return entries.map(({ level, message }) => `${LOG_PREFIXES[level] ?? ''}${message}`);
}

/**
 * A run the native executor ended at its wall-clock bound (its `ending`'s code, never its text)
 * back to the dialect's `Execution timed out`. Every other failure's text passes through, including
 * a program's own, however much it reads like a timeout. A native executor that does not report
 * endings (`reportsEndings`, absent from one written before them) has its timeout recognized by
 * the text the native contract gave it, so it keeps the dialect it had.
 */
export function renderError(error: string, ending: RunEnding | undefined, reportsEndings = true): string {
  if (ending?.code === 'EXECUTION_TIMEOUT') return TIMEOUT_MESSAGE;
  return !reportsEndings && ending === undefined && ExecutionTimeoutError.matches(error) ? TIMEOUT_MESSAGE : error;
}

export type { CodemodeExecutorOptions } from './options.js';

/** Each dialect executor's native one, for `replay`, which runs a record's native request. */
const natives = new WeakMap<object, Executor>();

/** The native executor `value` wraps, when it is a `CodemodeExecutor`. */
export function nativeExecutorOf(value: unknown): Executor | undefined {
  return typeof value === 'object' && value !== null ? natives.get(value) : undefined;
}

export class CodemodeExecutor {
  readonly #native: Executor;
  readonly #maxCodeBytes: number;
  readonly #normalized: NormalizedCode;
  readonly #tenant: string | undefined;

  constructor(native: Executor, options?: CodemodeExecutorOptions) {
    // Refused here rather than at the first execute(), where it would fail far from the mistake.
    assertNativeExecutor(native);
    this.#native = native;
    natives.set(this, native);
    const { maxCodeBytes, normalizeCacheChars, tenant } = resolveCodemodeOptions(options);
    this.#maxCodeBytes = maxCodeBytes;
    this.#tenant = tenant;
    this.#normalized = new NormalizedCode(normalizeCacheChars);
  }

  async execute(
    code: string,
    providersOrFns: readonly ExtendedProvider[] | Record<string, ToolFunction>,
    options?: ExtendedExecuteOptions,
  ): Promise<CodemodeExecuteResult> {
    const providers = resolveProviders(providersOrFns);
    warnUnknownOptions(options);
    // A wrong record option is the host's mistake: it rejects, as a malformed provider does.
    const recordOptions = resolveRecordOptions(options?.record);
    const events = resolveEventOptions('execute', options);
    const connectors = options?.connectors ?? [];
    // A refused request costs no worker: the native executor is never touched.
    const refusal = validateExecution(providers, connectors);
    if (refusal !== null) return refusedEarly(events, refusal);

    // Before normalization, whose parse costs the host seconds for megabytes of code.
    const codeBytes = typeof code === 'string' ? codeBytesOver(code, this.#maxCodeBytes) : null;
    if (codeBytes !== null) return refusedEarly(events, formatCodeTooLarge(codeBytes, this.#maxCodeBytes));

    const plan = planExecution(providers, connectors);
    const guard: CompletionGuard = { active: true };
    const request: ExecuteRequest = {
      code: this.#normalized.of(code),
      providers: plan.descriptors,
      dispatch: createDispatch(plan.handlers, guard),
      // The dialect measures wall-clock time, so a slow tool times the run out.
      countHostWaits: true,
    };
    // Left out, a field stays undefined and the native construction default applies.
    if (options?.modules !== undefined) request.modules = options.modules;
    // Upstream hands the bound to setTimeout, which takes a negative delay as 0: so does the dialect,
    // before the timeout rule (src/protocol/request-schema.ts) the native executor holds it to.
    if (options?.timeout !== undefined) request.timeout = atLeastZero(options.timeout);
    if (options?.cpuTimeout !== undefined) request.cpuTimeout = options.cpuTimeout;
    if (options?.outbound !== undefined) request.outbound = options.outbound;
    const tenant = options?.tenant ?? this.#tenant;
    if (tenant !== undefined) request.tenant = tenant;

    // Recorded, the request's dispatch is wrapped here, above the native executor, whichever it is.
    const execute = async (native: ExecuteRequest): Promise<ExecuteResult> => {
      try {
        // The native executor observes the run where its tool calls and console lines are at hand.
        return await this.#native.execute(native, events ?? undefined);
      } finally {
        // Calls the program abandoned are refused from here on.
        guard.active = false;
      }
    };
    const { outcome, record } =
      recordOptions === null
        ? { outcome: await execute(request), record: undefined }
        : await runRecorded(beginRecording(request, recordOptions), execute);
    const logs = formatLogs(outcome.logs);
    const rendered: CodemodeExecuteResult =
      outcome.error !== undefined
        ? {
            result: undefined,
            error: renderError(outcome.error, outcome.ending, this.#native.reportsEndings === true),
            logs,
          }
        : { result: outcome.result, logs };
    if (record !== undefined) rendered.record = record;
    return rendered;
  }

  /** Outside the dialect's interface, but the only way to release what the native executor holds. */
  dispose(): Promise<void> {
    return this.#native.dispose();
  }
}

/**
 * Whether this process has printed the bare-record deprecation. Upstream prints its own on every
 * call; once per process says the same to the operator without flooding a log with a line per run.
 */
let bareRecordDeprecationPrinted = false;

/** The dialect's `!Array.isArray` test: anything else is the deprecated bare record. */
function resolveProviders(
  providersOrFns: readonly ExtendedProvider[] | Record<string, ToolFunction>,
): readonly ExtendedProvider[] {
  if (Array.isArray(providersOrFns)) {
    const providers = providersOrFns as readonly ExtendedProvider[];
    assertFunctionRecords(providers);
    return providers;
  }
  if (!bareRecordDeprecationPrinted) {
    bareRecordDeprecationPrinted = true;
    console.warn(BARE_RECORD_DEPRECATION);
  }
  const providers = [{ name: DEFAULT_PROVIDER_NAME, fns: providersOrFns as Record<string, ToolFunction> }];
  assertFunctionRecords(providers);
  return providers;
}

/** A call the dialect refused before any run: its text is the result, and `end` the one event. */
function refusedEarly(events: ResolvedEventOptions | null, error: string): CodemodeExecuteResult {
  const result = { result: undefined, error };
  if (events !== null) new RunObservation(events).settle({ ...result, logs: [] });
  return result;
}

/** A negative number of milliseconds as 0; anything else unchanged (the native executor checks it). */
function atLeastZero(timeout: ExecuteRequest['timeout']): ExecuteRequest['timeout'] {
  return typeof timeout === 'number' && timeout < 0 ? 0 : timeout;
}
