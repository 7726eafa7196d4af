/**
 * Tool call values between the wire's text and the record's JSON. The sandbox sends arguments as
 * the binary codec's JSON, and the host answers with an envelope in it; the record keeps both as
 * plain JSON (bytes stay the codec's tag object), so `JSON.stringify` gives the same text back.
 */
import { binaryCodec } from '../protocol/codec.js';
import { messageOf } from '../protocol/message-of.js';
import { COMPLETED_MESSAGE } from '../protocol/texts.js';
import type { RecordedCall, RecordedOutcome, RecordedValue } from './types.js';

/** The argument array a call sent; an empty string is no arguments, as the dispatch grammar reads it. */
export function recordedArguments(argsJson: string): RecordedValue {
  if (!argsJson) return [];
  try {
    return JSON.parse(argsJson) as RecordedValue;
  } catch {
    // Not JSON at all (no sandbox of ours sends that): kept as the text it was.
    return argsJson;
  }
}

/** The envelope a host answered with, as the call's `result` or `error`. */
export function recordedAnswer(envelope: string): Pick<RecordedCall, 'result' | 'error'> {
  try {
    const parsed = JSON.parse(envelope) as { result?: RecordedValue; error?: unknown };
    if (typeof parsed.error === 'string') return { error: parsed.error };
    return Object.hasOwn(parsed, 'result') ? { result: parsed.result as RecordedValue } : {};
  } catch {
    return { error: envelope };
  }
}

/** The envelope a recorded call answers with on replay: the text the host sent then. */
export function answerEnvelope(call: RecordedCall): string {
  if (call.error !== undefined) return JSON.stringify({ error: call.error });
  return JSON.stringify(Object.hasOwn(call, 'result') ? { result: call.result } : {});
}

/** What a call the recorded run abandoned gets once the replayed run has ended: what any late call gets. */
export const LATE_ANSWER = JSON.stringify({ error: COMPLETED_MESSAGE });

/**
 * A run's settled value as the record keeps it: its JSON (bytes as the codec's tag), nothing for
 * `undefined`, or the reason JSON cannot write it (a BigInt, a cycle), so recording never fails a run.
 */
export function recordedResult(value: unknown): Pick<RecordedOutcome, 'result' | 'resultNotJson'> {
  if (value === undefined) return {};
  try {
    const text = binaryCodec.stringify(value);
    return text === undefined ? {} : { result: JSON.parse(text) as RecordedValue };
  } catch (error) {
    return { resultNotJson: messageOf(error) };
  }
}

/** Two recorded values are the same when their JSON text is. */
export function sameValue(left: RecordedValue | undefined, right: RecordedValue | undefined): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}
