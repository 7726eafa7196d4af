/**
 * Every text of run records and replay: what a wrong option, a record that cannot replay, a cut
 * record and a replayed call the record cannot answer say. One place, so a reword is one edit.
 */
import { formatDidYouMean } from '../protocol/did-you-mean.js';

/** A record option with a value its rule does not take. */
export function formatRecordOptionInvalid(name: string, rule: string, got: string): string {
  return `record.${name} must be ${rule}; got ${got}`;
}

/** `record` itself is neither `true`, `false` nor an options object. */
export function formatRecordValueInvalid(got: string): string {
  return `record must be true, false, or an object of record options ({maxBytes?, onRecord?}); got ${got}`;
}

/** A record option this version does not know. */
export function formatRecordOptionUnknown(name: string, known: readonly string[], nearest: string | undefined): string {
  return `record has no option "${name}"${formatDidYouMean(nearest)}; the options are ${known.join(', ')}`;
}

/** What a cut record says about itself. */
export function formatRecordTruncated(
  maxBytes: number,
  droppedCalls: number,
  droppedLogs: number,
  droppedResult: boolean,
): string {
  const parts = [`${droppedCalls} tool call(s)`, `${droppedLogs} console line(s)`];
  if (droppedResult) parts.push("the outcome's value");
  return `The run record passed its bound of ${maxBytes} bytes (record.maxBytes) and left out ${parts.join(', ')}; it cannot replay. Record again with a larger record.maxBytes to keep the whole run.`;
}

/** `replay` was handed something that is not a run record of a version it reads. */
export function formatNotARunRecord(problem: string): string {
  return `replay() takes a run record (format "codemode-run-record", schemaVersion 1, schema/run-record.schema.json): ${problem}`;
}

/** `replay` was handed a record's JSON text rather than the record. */
export const REPLAY_GOT_TEXT =
  'replay() takes a run record, the object, and got a string: parse stored JSON first, replay(JSON.parse(text), options)';

/** A replay option with a value its rule does not take. */
export function formatReplayOptionInvalid(name: string, rule: string, got: string): string {
  return `replay() options.${name} must be ${rule}; got ${got}`;
}

/** `replay`'s options are not an object. */
export function formatReplayOptionsInvalid(got: string): string {
  return `replay(record, options) takes an object of options ({executor, outbound?, timeout?, signal?}); got ${got}`;
}

/** A replay option this version does not know. */
export function formatReplayOptionUnknown(name: string, known: readonly string[], nearest: string | undefined): string {
  return `replay() has no option "${name}"${formatDidYouMean(nearest)}; the options are ${known.join(', ')}`;
}

/** The replayed run outlived replay's own bound and was given up. */
export function formatReplayBoundReached(boundMs: number): string {
  return `Replay gave the run up: it had not ended ${boundMs} ms after it started (its bound and replay's slack, host waits included)`;
}

/** The recorded run was given up while call `index` waited: the replayed one is given up there too. */
export function formatReplayGivenUp(index: number, recorded: string): string {
  return `Replay gave the run up at call #${index + 1}, where the recorded run was given up while the call waited (${recorded})`;
}

/** `replay` was handed a cut record. */
export function formatReplayTruncated(text: string): string {
  return `replay() cannot run a record that was cut: ${text}`;
}

/** `replay` was called without an executor to run on. */
export const REPLAY_NEEDS_EXECUTOR =
  'replay() needs options.executor, the executor to run the code on: new IsolateExecutor() from /isolate, the executor connect() returns, or a CodemodeExecutor over either';

/** What the replayed run's call gets when it parts from the record: the run goes on, the comparison has it. */
export function formatReplayCallDiverged(index: number): string {
  return `Replay: call #${index + 1} is not the call the record holds there, so the record has no answer for it`;
}

/** What a call past the record's last gets. */
export function formatReplayExtraCall(index: number, recorded: number): string {
  return `Replay: call #${index + 1} is past the record's ${recorded} call(s), so the record has no answer for it`;
}

/** The host's `onRecord` threw: the run's result still reaches the caller, and this line says why the record may be missing. */
export function formatOnRecordFailed(message: string): string {
  return `[@supolka/cloudflare-codemode-executor] record.onRecord threw, so the host may not have kept this run's record (the run's result is unaffected): ${message}`;
}
