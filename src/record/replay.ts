/**
 * `replay`: runs a recorded execution's code again on a fresh isolate of the executor the caller
 * passes, answers every tool call from the record in order (no real tool runs), and compares
 * what the run does with what the record holds, up to the first place they part.
 */
import { ExecutorError } from '../protocol/errors.js';
import type { Dispatch, ExecuteRequest, ExecuteResult, LogEntry } from '../protocol/types.js';
import { answerEnvelope, LATE_ANSWER, recordedArguments, recordedResult, sameValue } from './recorded-values.js';
import { startRecording } from './recorder.js';
import {
  formatNotARunRecord,
  formatReplayCallDiverged,
  formatReplayExtraCall,
  formatReplayTruncated,
  REPLAY_NEEDS_EXECUTOR,
} from './texts.js';
import {
  type RecordedCall,
  type RecordedOutcome,
  type ReplayComparison,
  type ReplayDivergence,
  type ReplayedCall,
  type ReplayOptions,
  RUN_RECORD_FORMAT,
  RUN_RECORD_SCHEMA_VERSION,
  type RunRecord,
} from './types.js';

/**
 * Runs `record`'s code again on `options.executor` and compares. Refuses, with `ExecutorError`
 * `INVALID_REQUEST`, a value that is no run record of this version, a record that was cut, and a
 * call without an executor. A run that fails or times out is an outcome, compared like any other.
 */
export async function replay(record: RunRecord, options: ReplayOptions): Promise<ReplayComparison> {
  if (typeof options?.executor?.execute !== 'function')
    throw new ExecutorError('INVALID_REQUEST', REPLAY_NEEDS_EXECUTOR);
  assertRunRecord(record);
  if (record.truncated !== undefined)
    throw new ExecutorError('INVALID_REQUEST', formatReplayTruncated(record.truncated.text));

  const answers = new RecordAnswers(record.calls);
  const request: ExecuteRequest = { ...record.request, dispatch: answers.dispatch };
  if (options.timeout !== undefined) request.timeout = options.timeout;
  if (options.outbound !== undefined) request.outbound = options.outbound;

  const recording = startRecording(request);
  let replayed: RunRecord;
  let outcome: RecordedOutcome;
  let logs: readonly LogEntry[];
  try {
    const result = await options.executor.execute(recording.request);
    replayed = recording.finish(result);
    outcome = outcomeOf(result);
    logs = result.logs;
  } catch (error) {
    replayed = recording.fail(error);
    outcome = replayed.outcome;
    logs = [];
  } finally {
    answers.end();
  }

  const divergence =
    answers.divergence ??
    answers.missing() ??
    outcomeDivergence(record.outcome, outcome) ??
    logDivergence(record.logs, logs);
  return divergence === undefined ? { identical: true, replayed } : { identical: false, divergence, replayed };
}

/** Answers each call of the replayed run with the recorded answer at its place, and notes the first that parts. */
class RecordAnswers {
  readonly #calls: readonly RecordedCall[];
  #made = 0;
  divergence: ReplayDivergence | undefined;
  /** Settles when the replayed run has ended. */
  readonly #ended: Promise<void>;
  /** Ends the replayed run's wait for the calls the recorded run never got an answer to. */
  readonly end: () => void;

  constructor(calls: readonly RecordedCall[]) {
    this.#calls = calls;
    let end!: () => void;
    this.#ended = new Promise<void>((resolve) => (end = resolve));
    this.end = end;
  }

  readonly dispatch: Dispatch = async (provider, tool, argsJson) => {
    const index = this.#made++;
    const call: ReplayedCall = { provider, tool, args: recordedArguments(argsJson) };
    const recorded = this.#calls[index];
    if (recorded === undefined) {
      this.divergence ??= { kind: 'extra-call', index, replayed: call };
      return JSON.stringify({ error: formatReplayExtraCall(index, this.#calls.length) });
    }
    if (recorded.provider !== provider || recorded.tool !== tool || !sameValue(recorded.args, call.args)) {
      this.divergence ??= { kind: 'call', index, recorded: callOf(recorded), replayed: call };
      return JSON.stringify({ error: formatReplayCallDiverged(index) });
    }
    // The host's dispatch rejected then: it rejects now, with the same text.
    if (recorded.rejected) throw new Error(recorded.error);
    // The recorded run ended before this call's answer (its bound ran out): so does the replayed one.
    if (recorded.durationMs === undefined) return this.#ended.then(() => LATE_ANSWER);
    return answerEnvelope(recorded);
  };

  /** The first recorded call the replayed run never made. */
  missing(): ReplayDivergence | undefined {
    const recorded = this.#calls[this.#made];
    return recorded === undefined ? undefined : { kind: 'missing-call', index: this.#made, recorded: callOf(recorded) };
  }
}

function callOf({ provider, tool, args }: RecordedCall): ReplayedCall {
  return { provider, tool, args };
}

/** The outcome as the record keeps it, whole: the comparison must not depend on the size bound. */
function outcomeOf(result: ExecuteResult): RecordedOutcome {
  const outcome: RecordedOutcome = recordedResult(result.result);
  if (result.error !== undefined) outcome.error = result.error;
  return outcome;
}

function outcomeDivergence(recorded: RecordedOutcome, replayed: RecordedOutcome): ReplayDivergence | undefined {
  const same =
    sameValue(recorded.result, replayed.result) &&
    recorded.resultNotJson === replayed.resultNotJson &&
    recorded.error === replayed.error &&
    recorded.rejected?.message === replayed.rejected?.message &&
    recorded.rejected?.code === replayed.rejected?.code;
  return same ? undefined : { kind: 'outcome', recorded, replayed };
}

function logDivergence(recorded: readonly LogEntry[], replayed: readonly LogEntry[]): ReplayDivergence | undefined {
  for (let index = 0; index < Math.max(recorded.length, replayed.length); index++) {
    const left = recorded[index];
    const right = replayed[index];
    if (left?.level === right?.level && left?.message === right?.message) continue;
    return {
      kind: 'log',
      index,
      recorded: left === undefined ? null : { level: left.level, message: left.message },
      replayed: right === undefined ? null : { level: right.level, message: right.message },
    };
  }
  return undefined;
}

/** The checks a record read back from storage meets before it runs; the schema states the rest. */
function assertRunRecord(record: unknown): asserts record is RunRecord {
  const problem = recordProblem(record);
  if (problem !== undefined) throw new ExecutorError('INVALID_REQUEST', formatNotARunRecord(problem));
}

function recordProblem(record: unknown): string | undefined {
  if (typeof record !== 'object' || record === null) return 'got no object';
  const { format, schemaVersion, request, calls, logs, outcome } = record as Partial<Record<keyof RunRecord, unknown>>;
  if (format !== RUN_RECORD_FORMAT) return `its format is ${JSON.stringify(format)}`;
  if (schemaVersion !== RUN_RECORD_SCHEMA_VERSION) return `its schemaVersion is ${JSON.stringify(schemaVersion)}`;
  if (typeof (request as { code?: unknown } | null)?.code !== 'string') return 'request.code is not a string';
  if (!Array.isArray((request as { providers?: unknown }).providers)) return 'request.providers is not an array';
  if (!Array.isArray(calls)) return 'calls is not an array';
  if (!Array.isArray(logs)) return 'logs is not an array';
  if (typeof outcome !== 'object' || outcome === null) return 'outcome is not an object';
  return undefined;
}
