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

/** `replay` was handed a cut record. */
export function formatReplayTruncated(text: string): string {
  return `replay() cannot run a record that was cut: ${text}`;
}

/** `replay` was called without an executor to run on. */
export const REPLAY_NEEDS_EXECUTOR =
  'replay() needs options.executor, the native executor to run the code on: new IsolateExecutor() from /isolate, or the executor connect() returns';

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
