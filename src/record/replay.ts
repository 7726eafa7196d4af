/**
 * `replay`: runs a recorded execution's code again on a fresh isolate of the executor the caller
 * passes, answers every tool call from the record in order (no real tool runs), and compares
 * what the run does with what the record holds, up to the first place they part.
 */
import { nativeExecutorOf } from '../codemode/codemode-executor.js';
import { ExecutorError } from '../protocol/errors.js';
import { cancellationText } from '../protocol/texts.js';
import type { Dispatch, ExecuteRequest, ExecuteResult, LogEntry } from '../protocol/types.js';
import { assertRunRecord } from './record-shape.js';
import { answerEnvelope, LATE_ANSWER, recordedArguments, recordedResult, sameValue } from './recorded-values.js';
import { startRecording } from './recorder.js';
import {
  DEFAULT_REPLAY_BOUND_MS,
  REPLAY_BOUND_SLACK_MS,
  type ResolvedReplayOptions,
  resolveReplayOptions,
} from './replay-options.js';
import {
  formatNotARunRecord,
  formatReplayBoundReached,
  formatReplayCallDiverged,
  formatReplayExtraCall,
  formatReplayGivenUp,
  formatReplayTruncated,
  REPLAY_GOT_TEXT,
} from './texts.js';
import type {
  RecordedCall,
  RecordedOutcome,
  RecordedRequest,
  ReplayComparison,
  ReplayDivergence,
  ReplayedCall,
  ReplayOptions,
  RunRecord,
} from './types.js';

/**
 * Runs `record`'s code again on `options.executor` and compares. Refuses, with `ExecutorError`
 * `INVALID_REQUEST`, a value that is no run record of this version (naming the first wrong field),
 * a record that was cut, and options it does not take. A run that fails or times out is an outcome,
 * compared like any other. It always ends: within the run's bound plus a slack, host waits
 * included, or when `options.signal` aborts (then it rejects with `EXECUTION_CANCELLED`).
 */
export async function replay(record: RunRecord, options: ReplayOptions): Promise<ReplayComparison> {
  const resolved = resolveReplayOptions(options, nativeExecutorOf);
  if (typeof record === 'string') throw new ExecutorError('INVALID_REQUEST', REPLAY_GOT_TEXT);
  assertRunRecord(record, (problem) => new ExecutorError('INVALID_REQUEST', formatNotARunRecord(problem)));
  if (record.truncated !== undefined)
    throw new ExecutorError('INVALID_REQUEST', formatReplayTruncated(record.truncated.text));
  if (resolved.signal?.aborted) throw cancelled();

  const run = new ReplayRun(record, resolved);
  try {
    return await run.compare();
  } finally {
    run.end();
  }
}

function cancelled(): ExecutorError {
  return new ExecutorError('EXECUTION_CANCELLED', cancellationText.cancelled('replay'));
}

/** How the replay ended a run itself, when it did. */
type GiveUp = { reason: 'caller' } | { reason: 'bound'; boundMs: number } | { reason: 'recorded'; index: number };

/** One replay: the run on the executor, the answers from the record, and what ends the run when it does not end. */
class ReplayRun {
  readonly #record: RunRecord;
  readonly #options: ResolvedReplayOptions;
  readonly #answers: RecordAnswers;
  readonly #abort = new AbortController();
  #giveUp: GiveUp | undefined;
  #gaveUp!: (giveUp: GiveUp) => void;
  readonly #givenUp = new Promise<GiveUp>((resolve) => (this.#gaveUp = resolve));
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onCallerAbort = () => this.#stop({ reason: 'caller' });

  constructor(record: RunRecord, options: ResolvedReplayOptions) {
    this.#record = record;
    this.#options = options;
    // The recorded run was given up while a call waited (its caller aborted, its connection broke):
    // the replayed one is given up at the same call, rather than waiting for an answer nobody gave.
    const rejected = record.outcome.rejected;
    this.#answers = new RecordAnswers(
      record.calls,
      rejected === undefined ? undefined : (index) => this.#stop({ reason: 'recorded', index }),
    );
  }

  #stop(giveUp: GiveUp): void {
    if (this.#giveUp !== undefined) return;
    this.#giveUp = giveUp;
    this.#abort.abort();
    this.#gaveUp(giveUp);
  }

  async compare(): Promise<ReplayComparison> {
    const { executor, signal } = this.#options;
    const request = replayRequest(this.#record.request, this.#answers.dispatch, this.#options);
    const boundMs = replayBoundMs(request.timeout);
    this.#timer = setTimeout(() => this.#stop({ reason: 'bound', boundMs }), boundMs);
    signal?.addEventListener('abort', this.#onCallerAbort, { once: true });

    const recording = startRecording(request);
    let replayed: RunRecord;
    let outcome: RecordedOutcome;
    let logs: readonly LogEntry[];
    // An executor that cannot cancel may ignore the signal: the replay ends all the same.
    const settled = executor.execute(recording.request, { signal: this.#abort.signal }).then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    const ended = await Promise.race([settled, this.#givenUp.then((giveUp) => ({ giveUp }))]);
    this.#answers.end();
    const giveUp = this.#giveUp;
    if (giveUp?.reason === 'caller') throw cancelled();
    if (giveUp !== undefined) {
      const message =
        giveUp.reason === 'bound'
          ? formatReplayBoundReached(giveUp.boundMs)
          : formatReplayGivenUp(giveUp.index, this.#record.outcome.rejected?.message ?? '');
      replayed = recording.fail(
        new ExecutorError(giveUp.reason === 'bound' ? 'EXECUTION_TIMEOUT' : 'EXECUTION_CANCELLED', message),
      );
      outcome = replayed.outcome;
      logs = [];
    } else if ('result' in ended) {
      replayed = recording.finish(ended.result);
      outcome = outcomeOf(ended.result);
      logs = ended.result.logs;
    } else {
      replayed = recording.fail((ended as { error: unknown }).error);
      outcome = replayed.outcome;
      logs = [];
    }

    const answers = this.#answers;
    // Given up where the recorded run was given up, the replayed run ended as that one did.
    const sameEnd = giveUp?.reason === 'recorded';
    const divergence =
      answers.divergence ??
      answers.missing() ??
      (sameEnd ? undefined : outcomeDivergence(this.#record.outcome, outcome)) ??
      logDivergence(this.#record.logs, logs);
    return divergence === undefined ? { identical: true, replayed } : { identical: false, divergence, replayed };
  }

  /** Clears the timer and the listener, and gives up a run still going (a rejection already in flight included). */
  end(): void {
    clearTimeout(this.#timer);
    this.#options.signal?.removeEventListener('abort', this.#onCallerAbort);
    this.#answers.end();
    if (!this.#abort.signal.aborted) this.#abort.abort();
  }
}

/**
 * The native request a replay runs: the recorded fields, named one by one, so nothing a stored
 * record carries beyond them (a `retainHandles`) reaches the executor; the run keeps nothing.
 */
function replayRequest(
  recorded: RecordedRequest,
  dispatch: Dispatch,
  { timeout, outbound }: ResolvedReplayOptions,
): ExecuteRequest {
  const request: ExecuteRequest = {
    code: recorded.code,
    providers: recorded.providers.map((provider) => ({ ...provider, tools: [...provider.tools] })),
    dispatch,
    retainHandles: false,
  };
  if (recorded.modules !== undefined) request.modules = recorded.modules;
  if (recorded.timeout !== undefined) request.timeout = recorded.timeout;
  if (recorded.cpuTimeout !== undefined) request.cpuTimeout = recorded.cpuTimeout;
  if (recorded.countHostWaits !== undefined) request.countHostWaits = recorded.countHostWaits;
  if (timeout !== undefined) request.timeout = timeout;
  if (outbound !== undefined) request.outbound = outbound;
  return request;
}

/** How long replay lets a run go before it gives it up: its bound, where it has a number, and the slack. */
function replayBoundMs(timeout: ExecuteRequest['timeout']): number {
  return (typeof timeout === 'number' ? timeout : DEFAULT_REPLAY_BOUND_MS) + REPLAY_BOUND_SLACK_MS;
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

  /** Called when the run reaches a call the recorded run was given up on; absent where it was not. */
  readonly #givenUpAt: ((index: number) => void) | undefined;

  constructor(calls: readonly RecordedCall[], givenUpAt: ((index: number) => void) | undefined) {
    this.#calls = calls;
    this.#givenUpAt = givenUpAt;
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
    if (recorded.durationMs === undefined) {
      // The recorded run was given up while this call waited: the replay gives its run up here.
      this.#givenUpAt?.(index);
      // Or it ended before this call's answer (its bound ran out): so does the replayed one.
      return this.#ended.then(() => LATE_ANSWER);
    }
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
