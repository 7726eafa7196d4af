/**
 * The outcome of a run as the supervisor sends it: the `done` message made from what the sandbox
 * answered, with its value encoded and measured against `limits.maxResultBytes`, and every frame
 * measured against what the channel carries before it is sent.
 */
import { createValueCodec } from '../../protocol/create-value-codec.js';
import { messageOf } from '../../protocol/message-of.js';
import { createExpandedSizer } from '../contract/expanded-size.js';
import type { DoneMessage, SupervisorMessage } from '../contract/messages.js';
import type { SupervisorSettings } from '../contract/sandbox-settings.js';
import { supervisorText } from '../contract/texts.js';
import type { HandleMissing, RunId, SandboxOutcome, SandboxWorker } from './types.js';

export const valueCodec = createValueCodec(() => undefined);
const expandedSize = createExpandedSizer();
const encoder = new TextEncoder();

/** The report of a run's outcome, through its bridge (supervisor.ts `Bridge.report`). */
export interface OutcomeReporter {
  report(text: string): void | Promise<void>;
}

export function disposeQuietly(value: unknown): void {
  try {
    if (typeof value === 'object' && value !== null && Symbol.dispose in value) {
      const dispose = (value as { [Symbol.dispose]: unknown })[Symbol.dispose];
      if (typeof dispose === 'function') dispose.call(value);
    }
  } catch {
    // Already disposed, or not disposable: nothing is held either way.
  }
}

/**
 * The UTF-8 size of a frame over `maxFrameBytes`, or null when it fits: the host's socket closes
 * on a larger one, which would end the member for what is a size over a cap.
 */
export function overFrameCap(text: string, settings: SupervisorSettings): number | null {
  // Three bytes at most per UTF-16 unit: most frames are measured without encoding them.
  if (text.length * 3 <= settings.maxFrameBytes) return null;
  const size = encoder.encode(text).byteLength;
  return size > settings.maxFrameBytes ? size : null;
}

/** A unit V8 cannot store in a one-byte string. */
const TWO_BYTE_UNIT = /[\u0100-\uffff]/;

/**
 * The size of an outcome frame over what the channel carries, or null when it fits: the host's
 * frame cap (UTF-8), and before it workerd's RPC from the run's context to the socket's, which
 * serializes a string at one byte a unit, or two once any unit needs them.
 */
function overOutcomeCaps(text: string, settings: SupervisorSettings): number | null {
  const frame = overFrameCap(text, settings);
  if (frame !== null) return frame;
  if (text.length <= settings.maxOutcomeRpcBytes / 2) return null;
  const serialized = TWO_BYTE_UNIT.test(text) ? 2 * text.length : text.length;
  return serialized > settings.maxOutcomeRpcBytes ? serialized : null;
}

/** A `done` message's value as JSON, already made to measure it. */
const valueJson = new WeakMap<object, string>();

/** A message as its frame's text. A value measured as JSON goes in as that text, not stringified again. */
function messageText(message: SupervisorMessage): string {
  const json = valueJson.get(message);
  if (json === undefined || message.t !== 'done' || message.outcome !== 'value') return JSON.stringify(message);
  const { value: _measured, ...rest } = message;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"value":${json}}`;
}

/**
 * Sends a run's outcome to the host through its bridge; one too large for the channel becomes a
 * fault saying so, with the run's logs when they fit beside it.
 */
export function report(bridge: OutcomeReporter, message: SupervisorMessage, settings: SupervisorSettings) {
  const text = messageText(message);
  const size = overOutcomeCaps(text, settings);
  if (size === null) return bridge.report(text);
  const fault = supervisorText.outcomeTooLarge(size, settings.maxFrameBytes, settings.maxOutcomeRpcBytes);
  const settledBeforeDeadline = message.t === 'done' ? message.settledBeforeDeadline : false;
  const logs = message.t === 'done' || message.t === 'cancelled' ? message.logs : [];
  const withLogs = JSON.stringify({
    t: 'done',
    run: message.run,
    outcome: 'fault',
    fault,
    logs,
    settledBeforeDeadline,
  });
  if (overOutcomeCaps(withLogs, settings) === null) return bridge.report(withLogs);
  return bridge.report(
    JSON.stringify({ t: 'done', run: message.run, outcome: 'fault', fault, logs: [], settledBeforeDeadline }),
  );
}

/** Where the encoded JSON holds a shared reference: inside a JSON string, a `"` is escaped. */
const SHARED_REFERENCE = '["x",';

/**
 * The encoded value and its JSON, or the text saying it is over `limits.maxResultBytes`: checked
 * here, before anything is sent, so the host never receives a value over its cap. A value holding
 * shared references is measured as it expands (expanded-size.ts), since that is what a host that
 * serializes it writes.
 */
function encodeCapped(
  value: unknown,
  settings: SupervisorSettings,
): { value: unknown; json: string } | { fault: string } {
  const encoded = valueCodec.encode(value);
  const json = JSON.stringify(encoded);
  let size = encoder.encode(json).byteLength;
  if (size <= settings.maxResultBytes && json.includes(SHARED_REFERENCE)) size = expandedSize(encoded);
  if (size <= settings.maxResultBytes) return { value: encoded, json };
  const shown = Number.isSafeInteger(size) ? String(size) : `more than ${Number.MAX_SAFE_INTEGER}`;
  return { fault: supervisorText.resultTooLarge(shown, settings.maxResultBytes) };
}

/**
 * The lines a worker captured, and whether its run ended in time. One that never started had
 * no clock running.
 */
async function snapshotOf(worker: SandboxWorker) {
  const entrypoint = worker.getEntrypoint();
  try {
    return await entrypoint.snapshot();
  } catch {
    return { logs: [], settledBeforeDeadline: true };
  } finally {
    disposeQuietly(entrypoint);
  }
}

/** Turns one sandbox call's outcome into the `done` message. Never throws. */
export async function doneMessage(
  run: RunId,
  worker: SandboxWorker,
  settings: SupervisorSettings,
  call: () => Promise<SandboxOutcome | HandleMissing>,
): Promise<DoneMessage> {
  let out: SandboxOutcome | HandleMissing;
  try {
    out = await call();
  } catch (error) {
    // The worker failed to start (a syntax error, a throwing module), or its result could not be
    // serialized: the text is the runtime's own.
    const { logs, settledBeforeDeadline } = await snapshotOf(worker);
    return { t: 'done', run, outcome: 'fault', fault: messageOf(error), logs, settledBeforeDeadline };
  }
  try {
    if ('missing' in out) return { t: 'done', run, outcome: 'missing', logs: [], settledBeforeDeadline: true };
    const { logs, settledBeforeDeadline } = out;
    if (!out.ok) return { t: 'done', run, outcome: 'threw', error: out.error, logs, settledBeforeDeadline };
    try {
      const encoded = encodeCapped(out.value, settings);
      if ('fault' in encoded)
        return { t: 'done', run, outcome: 'fault', fault: encoded.fault, logs, settledBeforeDeadline };
      const done: DoneMessage = { t: 'done', run, outcome: 'value', value: encoded.value, logs, settledBeforeDeadline };
      valueJson.set(done, encoded.json);
      return done;
    } catch (error) {
      return { t: 'done', run, outcome: 'fault', fault: messageOf(error), logs, settledBeforeDeadline };
    }
  } finally {
    // An RPC result holds the stubs inside it until disposed.
    disposeQuietly(out);
  }
}
