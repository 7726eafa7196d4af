/**
 * Records one execution above any native executor: it wraps the request's `dispatch` on the
 * caller's side, where every argument and answer is at hand, so the same record comes out of an
 * `IsolateExecutor`, `connect()`'s executor, or any other. Recording never changes the run: each
 * call reaches the host's `dispatch` as it would have, and the bound only decides what is kept.
 */
import { messageOf } from '../protocol/message-of.js';
import type { ExecuteRequest, ExecuteResult, Executor, ExecutorCallOptions, LogEntry } from '../protocol/types.js';
import { utf8Bytes } from '../protocol/utf8-bytes.js';
import { jsonStringBytes } from './json-bytes.js';
import { type ResolvedRecordOptions, resolveRecordOptions } from './record-options.js';
import { recordedAnswer, recordedArguments, recordedResult } from './recorded-values.js';
import { formatOnRecordFailed, formatRecordTruncated } from './texts.js';
import {
  type RecordedCall,
  type RecordedOutcome,
  type RecordedRequest,
  type RecordOptions,
  RUN_RECORD_FORMAT,
  RUN_RECORD_SCHEMA_VERSION,
  type RunRecord,
} from './types.js';

/** The JSON a call's or a line's keys and numbers add beside its values, counted as a flat cost. */
const ENTRY_OVERHEAD_BYTES = 96;

/** One execution being recorded. */
export interface RunRecording {
  /** The request to hand the executor: the caller's, with a `dispatch` that records every call. */
  readonly request: ExecuteRequest;
  /** The record of a run that settled with `outcome`; hands it to `onRecord`. */
  finish(outcome: ExecuteResult): RunRecord;
  /** The record of a run whose `execute` rejected with `error`; hands it to `onRecord`. */
  fail(error: unknown): RunRecord;
}

/**
 * Starts recording `request`. `options` are `record`'s value (`true` or `{maxBytes?, onRecord?}`);
 * a wrong one throws `ExecutorError` `INVALID_REQUEST` before anything runs.
 */
export function startRecording(request: ExecuteRequest, options: RecordOptions | true = true): RunRecording {
  return beginRecording(request, resolveRecordOptions(options) ?? resolveRecordOptions(true)!);
}

/** Starts recording with options already checked (`resolveRecordOptions`). */
export function beginRecording(request: ExecuteRequest, options: ResolvedRecordOptions): RunRecording {
  return new Recording(request, options);
}

/**
 * Runs `request` on `executor` and records it. Resolves with the run's outcome and its record;
 * when `execute` rejects, `onRecord` still gets the record and the rejection passes through.
 */
export async function recordExecution(
  executor: Executor,
  request: ExecuteRequest,
  options?: RecordOptions | true,
  callOptions?: ExecutorCallOptions,
): Promise<{ outcome: ExecuteResult; record: RunRecord }> {
  return runRecorded(startRecording(request, options), (recorded) => executor.execute(recorded, callOptions));
}

/**
 * Runs the recording's request through `execute` (a native executor's, or the dialect's call of
 * one), and makes its record: of the outcome, or of the rejection, which then passes through.
 */
export async function runRecorded(
  recording: RunRecording,
  execute: (request: ExecuteRequest) => Promise<ExecuteResult>,
): Promise<{ outcome: ExecuteResult; record: RunRecord }> {
  let outcome: ExecuteResult;
  try {
    outcome = await execute(recording.request);
  } catch (error) {
    recording.fail(error);
    throw error;
  }
  return { outcome, record: recording.finish(outcome) };
}

class Recording implements RunRecording {
  readonly request: ExecuteRequest;
  readonly #options: ResolvedRecordOptions;
  readonly #recorded: RecordedRequest;
  readonly #startedAt = new Date().toISOString();
  readonly #start = performance.now();
  readonly #calls: RecordedCall[] = [];
  /** Bytes the run has added so far, against `maxBytes`. */
  #used = 0;
  /** The index of the first call left out; every call from it on is left out. */
  #cutAt: number | null = null;
  #callsMade = 0;
  /** Set once the record is made: an answer arriving later (a call the run abandoned) changes nothing. */
  #done = false;

  constructor(request: ExecuteRequest, options: ResolvedRecordOptions) {
    this.#options = options;
    this.#recorded = recordedRequest(request);
    const dispatch = request.dispatch;
    this.request =
      typeof dispatch === 'function'
        ? {
            ...request,
            dispatch: async (provider, tool, argsJson) => {
              const index = this.#callsMade++;
              const call = this.#callStarted(index, provider, tool, argsJson);
              let envelope: string;
              try {
                envelope = await dispatch(provider, tool, argsJson);
              } catch (error) {
                this.#callAnswered(index, call, { error: messageOf(error), rejected: true });
                throw error;
              }
              this.#callAnswered(index, call, recordedAnswer(envelope), envelope);
              return envelope;
            },
          }
        : request;
  }

  #elapsed(): number {
    return Math.round(performance.now() - this.#start);
  }

  /** Keeps `bytes` more when they fit the bound; `false` once they do not. */
  #fits(bytes: number): boolean {
    if (this.#used + bytes > this.#options.maxBytes) return false;
    this.#used += bytes;
    return true;
  }

  #callStarted(index: number, provider: string, tool: string, argsJson: string): RecordedCall {
    const call: RecordedCall = { provider, tool, args: recordedArguments(argsJson), startMs: this.#elapsed() };
    // Counted as written: names as JSON strings, the arguments as the JSON text they already are.
    const bytes = ENTRY_OVERHEAD_BYTES + jsonStringBytes(provider) + jsonStringBytes(tool) + utf8Bytes(argsJson ?? '');
    if (this.#cutAt === null && !this.#fits(bytes)) this.#cutAt = index;
    if (this.#cutAt === null) this.#calls[index] = call;
    return call;
  }

  #callAnswered(
    index: number,
    call: RecordedCall,
    answer: Pick<RecordedCall, 'result' | 'error' | 'rejected'>,
    envelope?: string,
  ): void {
    if (this.#done) return;
    call.durationMs = this.#elapsed() - call.startMs;
    Object.assign(call, answer);
    if (this.#cutAt !== null && index >= this.#cutAt) return;
    const bytes = envelope === undefined ? jsonStringBytes(answer.error ?? '') : utf8Bytes(envelope);
    // A call whose answer does not fit is left out with every call after it, kept or not.
    if (!this.#fits(bytes)) this.#cutAt = this.#cutAt === null ? index : Math.min(this.#cutAt, index);
  }

  finish(outcome: ExecuteResult): RunRecord {
    const recorded: RecordedOutcome = {};
    let droppedResult = false;
    const value = recordedResult(outcome.result);
    if (Object.keys(value).length > 0) {
      if (this.#fits(utf8Bytes(JSON.stringify(value)))) Object.assign(recorded, value);
      else droppedResult = true;
    }
    if (outcome.error !== undefined) recorded.error = outcome.error;
    return this.#complete(recorded, outcome.logs, droppedResult);
  }

  fail(error: unknown): RunRecord {
    const rejected: RecordedOutcome['rejected'] = { message: messageOf(error) };
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string') rejected.code = code;
    return this.#complete({ rejected }, [], false);
  }

  #complete(outcome: RecordedOutcome, logs: readonly LogEntry[], droppedResult: boolean): RunRecord {
    this.#done = true;
    const kept: LogEntry[] = [];
    for (const { level, message } of logs) {
      // A line of quotes or control characters is written escaped: it costs what it takes in JSON.
      if (!this.#fits(ENTRY_OVERHEAD_BYTES + jsonStringBytes(message))) break;
      kept.push({ level, message });
    }
    const calls = this.#cutAt === null ? this.#calls : this.#calls.slice(0, this.#cutAt);
    const record: RunRecord = {
      format: RUN_RECORD_FORMAT,
      schemaVersion: RUN_RECORD_SCHEMA_VERSION,
      request: this.#recorded,
      // Array holes (a call started after the cut never got a slot) do not occur below the cut.
      calls: [...calls],
      logs: kept,
      outcome,
      timing: { startedAt: this.#startedAt, wallMs: this.#elapsed() },
    };
    const droppedCalls = this.#callsMade - record.calls.length;
    const droppedLogs = logs.length - kept.length;
    if (droppedCalls > 0 || droppedLogs > 0 || droppedResult) {
      const { maxBytes } = this.#options;
      const text = formatRecordTruncated(maxBytes, droppedCalls, droppedLogs, droppedResult);
      record.truncated = { maxBytes, droppedCalls, droppedLogs, droppedResult, text };
    }
    deliver(record, this.#options.onRecord);
    return record;
  }
}

/** What running the request again needs, as JSON: the functions (dispatch, outbound) stay out. */
function recordedRequest(request: ExecuteRequest): RecordedRequest {
  const recorded: RecordedRequest = {
    code: request.code,
    // A malformed request is the executor's to refuse; the record keeps what it can read of it.
    providers: (Array.isArray(request.providers) ? request.providers : []).map((provider) => {
      const tools = Array.isArray(provider.tools) ? [...provider.tools] : [];
      const copy: RecordedRequest['providers'][number] = { name: provider.name, tools };
      if (provider.positionalArgs !== undefined) copy.positionalArgs = provider.positionalArgs;
      if (provider.proxySource !== undefined) copy.proxySource = provider.proxySource;
      if (provider.prelude !== undefined) copy.prelude = provider.prelude;
      return copy;
    }),
  };
  if (request.modules !== undefined) recorded.modules = JSON.parse(JSON.stringify(request.modules));
  if (request.timeout !== undefined) recorded.timeout = request.timeout;
  if (request.cpuTimeout !== undefined) recorded.cpuTimeout = request.cpuTimeout;
  if (request.countHostWaits !== undefined) recorded.countHostWaits = request.countHostWaits;
  return recorded;
}

/** Hands the record to the host's `onRecord`; a throw there is reported, never the run's failure. */
function deliver(record: RunRecord, onRecord: ResolvedRecordOptions['onRecord']): void {
  if (onRecord === undefined) return;
  try {
    onRecord(record);
  } catch (error) {
    console.warn(formatOnRecordFailed(messageOf(error)));
  }
}
